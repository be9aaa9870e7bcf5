"""The stall guard (seed #236): a final reply that only announces its next step.

A reply with no tool call, at most 400 characters long, whose last 160
characters end on an announced action ("let me now ...", "I'll now ...", "now
I will ...", "next, I ...") is a model that stalled: the turn goes on with a
nudge to act, or to say plainly that it is done.
"""

from __future__ import annotations

import re

MAX_CHARS = 400
TAIL_CHARS = 160
_INTENT = re.compile(
    r"(?:\blet me now\b|\bi(?:['\u2019])?ll now\b|\bi will now\b"
    r"|\bnow i(?:['\u2019]ll| will)\b|\bnext[,:] i\b)"
    r"[^.!?\n]{0,100}[.:\u2026]?\s*$",
    re.IGNORECASE,
)
NUDGE = (
    "[System: your reply announced a next step but called no tool, so the turn would end "
    "here. Do it now with the tools, or, if the work is done, say so plainly.]"
)


def announces_next_step(text: str) -> bool:
    """A short reply that ends on an announced action."""
    text = text.strip()
    if not text or len(text) > MAX_CHARS:
        return False
    return _INTENT.search(text[-TAIL_CHARS:]) is not None
