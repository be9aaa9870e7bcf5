"""``/skill-name args``: a person's message that invokes a skill (seeds #6, #30).

A message whose first word is ``/`` and a skill's name (``_`` and ``-``
interchangeable) becomes an activation note, the skill's body, its folder,
the list of its supporting files and then the person's own instruction.
``/learn [focus]`` asks the model to distil the session into a skill (seed
#272; a skill called ``learn`` wins). ``/refine [focus]`` is the session's
own command (``refine_focus``): a background review of the skills (and
memory) at once, the focus given priority (seed #274). Any other message,
including an unknown ``/word``, is left as it is.
"""

from __future__ import annotations

import re

from .format import Skill
from .library import SkillSet

_SLASH = re.compile(r"/([A-Za-z0-9][A-Za-z0-9_-]{0,63})(?:\s+|$)")


LEARN_COMMAND = "learn"
REFINE_COMMAND = "refine"


def refine_focus(text: str) -> str | None:
    """The focus of a ``/refine [focus]`` message ("" for none); None for any other text."""
    word, _, rest = text.strip().partition(" ")
    return rest.strip() if word == "/" + REFINE_COMMAND else None


def learn_prompt(focus: str) -> str:
    """The user turn ``/learn [focus]`` sends (seed #272): distil a skill with skill_manage."""
    about = focus or "the workflow we just went through"
    return (
        f"[The person asked you to learn from this session: {about}.]\n\n"
        "Distil it into a skill with skill_manage so a later session can repeat it: "
        "first check the Skills list (and skill_view any that looks close) and patch an "
        "existing skill rather than writing a near-duplicate. The skill's description is "
        "one line saying when to use it; the body gives the steps that worked, in order, "
        "the traps met and how to check the result. Leave out secrets, personal data and "
        "anything specific to this one run. Say which skill you wrote or changed."
    )


def skill_invocation(text: str, skills: SkillSet) -> tuple[Skill, str] | None:
    """(the skill, the rest of the message) when ``text`` invokes one, else None."""
    match = _SLASH.match(text.lstrip())
    if match is None:
        return None
    skill = skills.get(match.group(1))
    if skill is None:
        return None
    return skill, text.lstrip()[match.end() :].strip()


def invocation_message(skill: Skill, instruction: str) -> str:
    """The user message that runs ``skill`` with the person's ``instruction``."""
    parts = [
        f'[The person invoked the skill "{skill.name}". Follow it for this request.]',
        skill.body.strip(),
        f"Skill folder: {skill.directory}",
    ]
    files = skill.supporting_files()
    if files:
        listing = "\n".join(f"- {f}" for f in files)
        parts.append(f"Supporting files (load with skill_view and file):\n{listing}")
    parts.append(f"The person's request: {instruction}" if instruction else "No further request.")
    return "\n\n".join(parts)
