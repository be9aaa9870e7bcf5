"""Skills: folders of know-how the agent loads when a task needs them (``docs/skills.md``).

A skill is a folder with ``SKILL.md`` (YAML front matter and a Markdown body)
and optional ``references/``, ``scripts/``, ``assets/``. The system prompt
lists each skill's name and description; ``skill_view`` loads one in full.
"""

from __future__ import annotations

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
