"""``skill_view``: load a skill's body, or one of its supporting files (progressive disclosure).

The system prompt lists only names and descriptions; the model calls this
when a task matches one. Quarantined and unknown skills are refused with the
names that do exist; a file must lie inside the skill's ``references/``,
``scripts/`` or ``assets/`` folder. Loading a user skill records its use
(``usage.record_use``: the curator's activity date), except a background review's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome

from .format import SUPPORT_DIRS, Skill
from .library import SkillLibrary, SkillSet
from .usage import record_use

MAX_FILE_CHARS = 60_000


class SkillViewTool(Tool):
    """``skill_view(name, [file])``."""

    name = "skill_view"
    kind = ToolKind.READ_ONLY
    toolset = "skills"
    description = (
        "Load a skill listed under Skills in the system prompt: its full instructions, or "
        "with file one of its supporting files (a path such as references/api.md from the "
        "list the body ends with). Call it before a task the skill's description matches."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "description": "The skill's name."},
            "file": {
                "type": "string",
                "minLength": 1,
                "description": "A supporting file, relative to the skill's folder.",
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    }

    def __init__(self, library: SkillLibrary, *, record_uses: bool = True) -> None:
        """``record_uses``: a load counts as a use (False for a background review's reads,
        which are not the agent using the skill)."""
        self.library = library
        self.record_uses = record_uses

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        name = str(args["name"])
        file = args.get("file")
        return await trio.to_thread.run_sync(self._view, ctx.cwd, name, file)

    def _view(self, cwd: Path, name: str, file: object) -> ToolOutcome:
        seen = self.library.look(cwd)
        outcome = view(seen, name, None if file is None else str(file))
        skill = seen.get(name)
        used = not outcome.is_error and skill is not None and skill.source == "user"
        if used and self.record_uses and skill is not None:
            record_use(self.library.user_dir, skill.name)  # the curator's activity date
        return outcome


def view(seen: SkillSet, name: str, file: str | None) -> ToolOutcome:
    """The answer of skill_view for ``name`` (and ``file``) among ``seen`` (blocking)."""
    skill = seen.get(name)
    if skill is None:
        blocked = next((q for q in seen.quarantined if q.name == name), None)
        if blocked is not None:
            return ToolOutcome.error(
                f"Skill '{name}' is quarantined: the threat scan found {blocked.scan.reason()}.",
                reason="quarantined",
                skill=name,
            )
        known = ", ".join(sorted(seen.skills)) or "none"
        return ToolOutcome.error(
            f"No skill named '{name}'. Skills: {known}.", reason="unknown_skill", skill=name
        )
    if file is None:
        return ToolOutcome.ok(_body(skill), skill=skill.name, source=skill.source)
    return _file(skill, file)


def _body(skill: Skill) -> str:
    text = f"# Skill {skill.name}\n\n{skill.body.strip()}"
    files = skill.supporting_files()
    if files:
        listing = "\n".join(f"- {f}" for f in files)
        text += f"\n\nSupporting files (skill_view with file):\n{listing}"
    return text


def _file(skill: Skill, file: str) -> ToolOutcome:
    rel = Path(file)
    inside = (
        not rel.is_absolute()
        and ".." not in rel.parts
        and len(rel.parts) >= 2
        and rel.parts[0] in SUPPORT_DIRS
    )
    if not inside or file not in skill.supporting_files():
        listed = ", ".join(skill.supporting_files()) or "none"
        return ToolOutcome.error(
            f"Skill '{skill.name}' has no supporting file '{file}'. Its files: {listed}.",
            reason="unknown_file",
            skill=skill.name,
        )
    path = skill.directory / rel
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ToolOutcome.error(f"{file} is not text; it is not loaded.", reason="binary")
    except OSError as exc:
        return ToolOutcome.error(f"{file} cannot be read: {exc.strerror or exc}", reason="io")
    if len(text) > MAX_FILE_CHARS:
        cut = len(text) - MAX_FILE_CHARS
        text = f"{text[:MAX_FILE_CHARS]}\n\n[... {cut} more characters of {file} cut]"
    return ToolOutcome.ok(text, skill=skill.name, file=file)
