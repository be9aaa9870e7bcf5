"""``skill_manage``: the agent writes its own skills (create, edit, patch, delete, write_file).

Changes go to the user skills folder through ``SkillWriter`` (locks, parse
and threat checks there). With ``[skills] write_approval`` each change is
checked the same way but staged for the person (``pending.py``); a background
review lends its ``SkillDraft``, committed only when the review completes.
The session's index is not rebuilt: the next turn's delta note tells the
model what was added or removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import trio

from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome

from .draft import SkillDraft
from .library import SkillLibrary
from .manage import SkillWriteError, SkillWriter

ACTIONS = ("create", "edit", "patch", "delete", "rename", "write_file")


class SkillManageTool(Tool):
    """``skill_manage(action, name, ...)``."""

    name = "skill_manage"
    kind = ToolKind.OTHER
    toolset = "skills"
    description = (
        "Write your own skills, so a procedure that worked is there next time. create "
        "(content = the whole SKILL.md: '---' front matter with name and a one-line "
        "description, '---', then the steps), edit (content replaces SKILL.md), patch "
        "(old_text, a part that occurs once, becomes new_text), delete (archived, "
        "recoverable), rename (new_name; references in your other skills follow), "
        "write_file (file_path under references/, scripts/ or assets/, file_content). "
        "Write a skill after a hard task that will come back, not for "
        "one-off facts. Skills the person locked cannot be changed."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "name": {"type": "string", "minLength": 1, "description": "The skill's name."},
            "content": {"type": "string", "description": "The whole SKILL.md (create, edit)."},
            "old_text": {"type": "string", "description": "Text to replace (patch)."},
            "new_text": {"type": "string", "description": "Its replacement (patch)."},
            "new_name": {"type": "string", "description": "The skill's new name (rename)."},
            "file_path": {"type": "string", "description": "e.g. references/x.md (write_file)."},
            "file_content": {"type": "string", "description": "The file's text (write_file)."},
        },
        "required": ["action", "name"],
        "additionalProperties": False,
    }

    def __init__(self, library: SkillLibrary, draft: SkillDraft | None = None) -> None:
        """``draft``: a background review's (its writes wait for the review to complete)."""
        self.library = library
        self.writer = SkillWriter(library.user_dir)
        self.draft = draft

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        action, name = str(args["action"]), str(args["name"])
        needed = {
            "create": ("content",),
            "edit": ("content",),
            "patch": ("old_text", "new_text"),
            "delete": (),
            "rename": ("new_name",),
            "write_file": ("file_path", "file_content"),
        }[action]
        missing = [key for key in needed if not isinstance(args.get(key), str)]
        if missing:
            return ToolOutcome.error(
                f"action '{action}' needs {', '.join(missing)}; nothing changed.",
                reason="missing_argument",
            )
        try:
            text = await trio.to_thread.run_sync(self._apply, action, name, args)
        except SkillWriteError as exc:
            return ToolOutcome.error(str(exc), reason=exc.reason, action=action, skill=name)
        return ToolOutcome.ok(text, action=action, skill=name)

    def _apply(self, action: str, name: str, args: Mapping[str, Any]) -> str:
        if self.draft is not None:
            text = self._write(self.draft, action, name, args)
            return f"{text} Kept in this review's draft: written when the review completes."
        if self.library.write_approval:
            draft = SkillDraft(self.writer, stage=True)
            text = self._write(draft, action, name, args)
            report = draft.commit("skill_manage")
            if report.failed:
                raise SkillWriteError(report.failed[0], "not_staged")
            return (
                f"{text} Not written yet: [skills] write_approval holds it for the person "
                f"({'; '.join(report.staged)}; hermes skills pending)."
            )
        return self._write(self.writer, action, name, args)

    @staticmethod
    def _write(
        writer: SkillWriter | SkillDraft, action: str, name: str, args: Mapping[str, Any]
    ) -> str:
        if action == "create":
            skill = writer.create(name, args["content"])
            return f"Created skill '{skill.name}' in {skill.directory}."
        if action == "edit":
            writer.edit(name, args["content"])
            return f"Rewrote {name}/SKILL.md."
        if action == "patch":
            writer.patch(name, args["old_text"], args["new_text"])
            return f"Patched {name}/SKILL.md."
        if action == "delete":
            target = writer.delete(name)
            return f"Archived skill '{name}' to {target} (recoverable)."
        if action == "rename":
            skill = writer.rename(name, args["new_name"])
            return f"Renamed skill '{name}' to '{skill.name}'."
        path = writer.write_file(name, args["file_path"], args["file_content"])
        return f"Wrote {path.relative_to(writer.user_dir)}."
