"""The model summary: the request to the auxiliary model, and the check of its answer.

Acceptance rule: after trimming an echoed marker, a summary is garbage when it
is empty, shorter than ``MIN_CHARS``, or has fewer than ``MIN_SECTIONS`` of the
requested headings. An overlong summary is not refused (it still holds the
history) but cut at ``settings.summary_max_chars`` on a line break, with a note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes.compression.marker import SUMMARY_END, SUMMARY_MARKER
from hermes.compression.render import render_transcript
from hermes.compression.settings import CompressionSettings
from hermes.model.types import Message

SECTIONS = (
    "Goal and user requests",
    "Progress and completed actions",
    "Key decisions and facts",
    "Files and commands touched",
    "Open problems and next steps",
)
"""The summary's headings, in order (the static summary uses them too)."""

SUMMARY_SYSTEM = (
    "You compress the history of a working session between a user and an AI agent that "
    "uses tools (shell, files, background processes). The agent will continue the work "
    "with only your summary in place of the messages you are shown, so keep everything "
    "it needs to carry on: what the user asked for, what was done and with what result, "
    "decisions and their reasons, exact file paths, commands, identifiers, error messages "
    "and values that matter. Drop chit-chat, repetition and raw tool output that no longer "
    "matters. Write plain markdown, concise and factual, in the user's language. Do not "
    "address the user, do not call tools and do not continue the conversation."
)


def summary_prompt(
    middle: Sequence[Message], previous_summary: str | None, focus: str | None
) -> str:
    """The user message for the summary call."""
    parts: list[str] = []
    if previous_summary:
        parts.append(
            "The conversation was compacted before. Here is the previous summary:\n\n"
            f"<previous-summary>\n{previous_summary.strip()}\n</previous-summary>\n\n"
            "Update the previous summary with what follows: keep what still holds, "
            "revise what changed, and add the new work."
        )
    else:
        parts.append("Summarise the following part of the conversation.")
    if focus and focus.strip():
        parts.append(
            f"The user asked to focus on: {focus.strip()}\n"
            "Give that topic the most detail; keep the rest brief."
        )
    headings = "\n".join(f"## {s}" for s in SECTIONS)
    parts.append(
        "Write the summary under exactly these markdown headings, in this order "
        "(write 'None.' under a heading with nothing to report):\n\n" + headings
    )
    parts.append(f"<conversation>\n{render_transcript(middle)}\n</conversation>")
    parts.append("Now write the summary, starting with the first heading.")
    return "\n\n".join(parts)


# -- checking the answer --------------------------------------------------------

MIN_CHARS = 200
MIN_SECTIONS = 3
_KEYWORDS = (
    ("goal", "request"),
    ("progress", "completed", "actions", "done"),
    ("decision", "fact"),
    ("file", "command"),
    ("open", "problem", "next step", "todo"),
)
_HEADING = re.compile(r"^\s*(#{1,6}\s|\*\*|__)|:\s*$|\*\*\s*$")


class GarbageSummary(ValueError):
    """The summary is unusable; ``reason`` says why. The caller falls back to static."""

    def __init__(self, reason: str, *, empty: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.empty = empty
        """Nothing was written (an abort, ``failures.py``), not merely a poor summary."""


def sections_present(text: str) -> int:
    """How many of the expected sections have a heading-like line naming them."""
    headings = [
        line.lower()
        for line in text.splitlines()
        if len(line.strip()) <= 80 and _HEADING.search(line)
    ]
    return sum(1 for words in _KEYWORDS if any(w in h for h in headings for w in words))


def accept_summary(text: str, settings: CompressionSettings) -> str:
    """The usable summary body, or ``GarbageSummary``."""
    body = text.strip()
    if body.startswith(SUMMARY_MARKER):
        _, _, body = body.partition("\n")
        body = body.strip()
    if body.endswith(SUMMARY_END):
        body = body[: -len(SUMMARY_END)].rstrip()
    if not body:
        raise GarbageSummary("the summary is empty", empty=True)
    if len(body) < MIN_CHARS:
        raise GarbageSummary(f"the summary is too short ({len(body)} < {MIN_CHARS} characters)")
    found = sections_present(body)
    if found < MIN_SECTIONS:
        raise GarbageSummary(
            f"the summary has {found} of the {len(_KEYWORDS)} requested sections "
            f"(at least {MIN_SECTIONS} needed)"
        )
    limit = settings.summary_max_chars
    if len(body) > limit:
        note = f"\n[Summary cut at {limit:,} of {len(body):,} characters.]"
        cut = body.rfind("\n", 0, limit - len(note))
        if cut < limit // 2:
            cut = limit - len(note)
        body = body[:cut].rstrip() + note
    return body
