"""A session's view of the skills: what its prompt lists, and the notes its turns carry.

``system_parts()`` gives the stable-tier text (index, then pinned skills).
``user_text()`` turns a person's ``/skill-name args`` into the skill's
invocation, and prefixes the one-shot delta note when the set differs from
what the model was told: the index in the system prompt, as amended by the
newest earlier note (seeds #6, #25, #27, #29, #30). Nothing is kept between
calls: the prompt and the transcript are the record.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path

from .invoke import LEARN_COMMAND, invocation_message, learn_prompt, skill_invocation
from .library import SkillLibrary
from .prompt import (
    ADDED,
    INDEX_HEADER,
    NOTE_HEADER,
    REMOVED,
    Index,
    delta_note,
    index_of,
    index_text,
    pinned_text,
)
from .scan import Blocked, BlockReport
from .usage import record_use

log = logging.getLogger(__name__)

_LINE = re.compile(r"- ([a-z0-9][a-z0-9-]*): (.*)")


def system_parts(
    library: SkillLibrary,
    cwd: Path,
    *,
    tools: Iterable[str] | None = None,
    pin: bool = True,
    report: BlockReport | None = None,
) -> tuple[str, ...]:
    """The stable-tier text: the index (names and descriptions), then pinned skills;
    ``report`` is told of each quarantined project skill."""
    seen = library.look(cwd, tools=tools)
    if report is not None:
        for held in seen.quarantined:
            what = f"project skill {held.name}"
            report(Blocked(what, str(held.directory), held.scan.reason(), "", "quarantined"))
    parts = []
    index = index_text(index_of(seen.sorted()))
    if index is not None:
        parts.append(index)
    if pin and library.pinned:
        pinned = []
        for name in library.pinned:
            skill = seen.get(name)
            if skill is None:
                log.warning("pinned skill %r not found; skipped", name)
            else:
                pinned.append(skill)
        text = pinned_text(pinned)
        if text is not None:
            parts.append(text)
    return tuple(parts)


def told_index(system: str, user_texts: Iterable[str]) -> Index | None:
    """The index the model was told: the system prompt's, amended by each note after it.

    ``user_texts`` are the user messages since the prompt, oldest first. None:
    the prompt has no skills index, so nothing is compared (seed #27).
    """
    start = system.find(INDEX_HEADER)
    if start < 0:
        return None
    told: dict[str, str] = {}
    for line in system[start + len(INDEX_HEADER) :].split("\n"):
        if not line.strip():
            if told:
                break
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            break
        told[match.group(1)] = match.group(2)
    for text in user_texts:
        if not text.startswith(NOTE_HEADER):
            continue
        for line in text.split("\n")[1:]:
            if line.startswith(ADDED):
                added = _LINE.fullmatch("- " + line[len(ADDED) :])
                if added is not None:
                    told[added.group(1)] = added.group(2)
            elif line.startswith(REMOVED):
                told.pop(line[len(REMOVED) :].strip(), None)
            else:
                break
    return told


def user_text(
    library: SkillLibrary,
    cwd: Path,
    text: str,
    *,
    told: Index | None,
    from_person: bool = True,
    tools: Iterable[str] | None = None,
) -> str:
    """The user message to send for ``text`` (blocking: looks at the skill places)."""
    seen = library.look(cwd, tools=tools)
    if from_person:
        invoked = skill_invocation(text, seen)
        if invoked is not None:
            text = invocation_message(*invoked)
            if invoked[0].source == "user":
                record_use(library.user_dir, invoked[0].name)
        else:
            word, _, rest = text.strip().partition(" ")
            if word == "/" + LEARN_COMMAND:
                text = learn_prompt(rest.strip())
    if told is None:
        return text
    note = delta_note(told, index_of(seen.sorted()))
    return text if note is None else f"{note}\n\n{text}"
