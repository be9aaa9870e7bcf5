"""What a reply cut by a redirect or an interrupt leaves behind (seed #154).

``CrossedReply.HERMES`` (the default) is Hermes' shape:

- **redirect** (``_apply_active_turn_redirect``): the visible text streamed so far
  becomes a plain assistant message (no marker), or ``PLACEHOLDER`` when nothing
  visible was streamed or the text ran away into repetition; then the correction
  is a user message carrying the checkpoint the model reads (``correction``:
  ``CONTEXT_HEADER``, ``SCAFFOLD``, the visible text under ``VISIBLE_HEADER`` or
  ``LOOPED``, then the user's words). The request is issued again, at most
  ``REDIRECT_RESTARTS`` times in a turn (Hermes' ``agent.api_max_retries``);
  past that the turn ends and the correction runs as the next turn.
- **interrupt** (``handle_api_interrupt``): the visible text stays as a plain
  assistant message; a runaway one is stored as ``PLACEHOLDER`` (the user is told
  ``LOOPED``); nothing streamed, nothing stored.

``CrossedReply.MARKED`` is this project's earlier shape: the text kept with a
``[redirected]`` / ``[interrupted]`` marker line and the correction as
``REDIRECT_MARK``, with no placeholder and no restart bound.
"""

from __future__ import annotations

import enum

from hermes.model.repetition import is_runaway


class CrossedReply(enum.Enum):
    """How a cut reply is kept (``[session] crossed_reply``)."""

    HERMES = "hermes"
    MARKED = "marked"


PLACEHOLDER = "[interrupt: no assistant output for this turn]"
"""The assistant message standing in for a reply with nothing visible (or a loop)."""
SCAFFOLD = "[This response was interrupted by a user correction.]"
CONTEXT_HEADER = "[Context from the interrupted assistant response]"
VISIBLE_HEADER = "Visible response before the interruption:"
LOOPED = "[the reply degenerated into a repetition loop and was interrupted]"
REDIRECT_MARK = "[Correction from the user; the previous reply was cut short: {text}]"
"""``MARKED``: the correction's text."""
REDIRECT_RESTARTS = 3
"""Requests reissued for redirects in one turn (Hermes' ``agent.api_max_retries``)."""


def looped(visible: str, cut_for_repetition: bool) -> bool:
    """Whether the cut text is a runaway loop (the watch cut it, or it reads as one)."""
    return cut_for_repetition or is_runaway(visible)


def correction(text: str, visible: str, loop: bool) -> str:
    """The redirect's user message as the model reads it (``HERMES``)."""
    parts = [SCAFFOLD]
    if loop:
        parts.append(LOOPED)
    elif visible:
        parts += [VISIBLE_HEADER, visible]
    checkpoint = "\n\n".join(parts)
    return f"{CONTEXT_HEADER}\n{checkpoint}\n\n{text}"
