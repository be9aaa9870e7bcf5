"""What the system prompt says about skills: the index, pinned skills, the delta note.

The index (seed #25) is one line per skill, ``- name: description``, sorted
by name, so the same set always gives the same bytes and the cached prompt
prefix holds. When the set changes mid-session the prompt is not rebuilt: the
next user message carries a one-shot note of what was added and removed
(seed #27).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .format import Skill

INDEX_HEADER = (
    "# Skills\n\n"
    "Skills are procedures you can load when a task needs one. Before starting a task "
    "that one of these matches, call skill_view with its name and follow the body; "
    "skill_view with a file loads one of the skill's references.\n"
)

NOTE_HEADER = "[Skills changed since the system prompt was written; this supersedes its list.]"
ADDED = "- added: "
REMOVED = "- removed: "

Index = Mapping[str, str]
"""name -> one-line description: what the model was told."""


def index_of(skills: Sequence[Skill]) -> dict[str, str]:
    return {s.name: s.description for s in sorted(skills, key=lambda s: s.name)}


def index_text(index: Index) -> str | None:
    """The stable-tier index block, or None when there are no skills."""
    if not index:
        return None
    lines = [f"- {name}: {index[name]}" for name in sorted(index)]
    return INDEX_HEADER + "\n" + "\n".join(lines)


def pinned_text(skills: Sequence[Skill]) -> str | None:
    """Pinned skills in full (seed #29), marked as active guidance for the session."""
    if not skills:
        return None
    parts = [
        f"## Skill {s.name} (pinned: active guidance for this session)\n\n{s.body.strip()}"
        for s in skills
    ]
    return "# Pinned skills\n\n" + "\n\n".join(parts)


def delta_note(told: Index, now: Index) -> str | None:
    """The one-shot note for a user message when the skill set changed, else None."""
    added = sorted(n for n in now if n not in told or now[n] != told[n])
    removed = sorted(n for n in told if n not in now)
    if not added and not removed:
        return None
    lines = [NOTE_HEADER]
    lines.extend(f"{ADDED}{n}: {now[n]}" for n in added)
    lines.extend(f"{REMOVED}{n}" for n in removed)
    return "\n".join(lines)
