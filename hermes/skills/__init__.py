"""Skills: folders of know-how the agent loads when a task needs them (``docs/skills.md``).

A skill is a folder with ``SKILL.md`` (YAML front matter and a Markdown body)
and optional ``references/``, ``scripts/``, ``assets/``. The system prompt
lists each skill's name and description; ``skill_view`` loads one in full.

Imports are lazy (PEP 562): ``from hermes.skills import X`` loads only the module
that defines ``X``, so a CLI command that reads the curator's files does not load
the tools and, through them, the SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .draft import SkillDraft, SkillDraftReport
    from .format import MAX_SKILL_BYTES, SKILL_FILE, Skill, SkillProblem, parse_skill
    from .invoke import invocation_message, refine_focus, skill_invocation
    from .library import BUNDLED_DIR, Quarantined, SkillLibrary, SkillSet, project_root
    from .manage import SkillWriteError, SkillWriter
    from .manage_tool import SkillManageTool
    from .pending import SkillChange
    from .prompt import delta_note, index_of, index_text, pinned_text
    from .scan import Blocked, BlockReport, Finding, ScanResult, blocked_notice, scan_text
    from .session_skills import system_parts, told_index, user_text
    from .tool import SkillViewTool

_HOMES = {
    "SkillDraft": "draft",
    "SkillDraftReport": "draft",
    "MAX_SKILL_BYTES": "format",
    "SKILL_FILE": "format",
    "Skill": "format",
    "SkillProblem": "format",
    "parse_skill": "format",
    "invocation_message": "invoke",
    "refine_focus": "invoke",
    "skill_invocation": "invoke",
    "BUNDLED_DIR": "library",
    "Quarantined": "library",
    "SkillLibrary": "library",
    "SkillSet": "library",
    "project_root": "library",
    "SkillWriteError": "manage",
    "SkillWriter": "manage",
    "SkillManageTool": "manage_tool",
    "SkillChange": "pending",
    "delta_note": "prompt",
    "index_of": "prompt",
    "index_text": "prompt",
    "pinned_text": "prompt",
    "Blocked": "scan",
    "BlockReport": "scan",
    "Finding": "scan",
    "ScanResult": "scan",
    "blocked_notice": "scan",
    "scan_text": "scan",
    "system_parts": "session_skills",
    "told_index": "session_skills",
    "user_text": "session_skills",
    "SkillViewTool": "tool",
}
"""Each public name and the submodule that defines it."""


def __getattr__(name: str) -> Any:
    """Load a public name's submodule on first use (and keep the name here)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BUNDLED_DIR",
    "MAX_SKILL_BYTES",
    "SKILL_FILE",
    "BlockReport",
    "Blocked",
    "Finding",
    "Quarantined",
    "ScanResult",
    "Skill",
    "SkillChange",
    "SkillDraft",
    "SkillDraftReport",
    "SkillLibrary",
    "SkillManageTool",
    "SkillProblem",
    "SkillSet",
    "SkillViewTool",
    "SkillWriteError",
    "SkillWriter",
    "blocked_notice",
    "delta_note",
    "index_of",
    "index_text",
    "invocation_message",
    "parse_skill",
    "pinned_text",
    "project_root",
    "refine_focus",
    "scan_text",
    "skill_invocation",
    "system_parts",
    "told_index",
    "user_text",
]
