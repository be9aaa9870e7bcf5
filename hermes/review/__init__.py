"""The background reviewer: after some turns, a cancellable task saves what is worth remembering.

| module | one job |
|---|---|
| ``settings.py`` | ``ReviewSettings``: interval, budgets, model |
| ``prompt.py`` | the review question; a digest of the transcript for another model |
| ``actor.py`` | ``Reviewer``: the review loop as a one-shot task, writing to a ``MemoryDraft`` |

The session decides when to start one and kills it the moment new input
arrives (``hermes.session.reviews``); see ``docs/memory.md``.
"""

from .actor import Reviewer, ReviewJob, ReviewOutcome, spent_channel
from .prompt import REVIEW_PROMPT, render_digest, review_messages
from .settings import ReviewSettings

__all__ = [
    "REVIEW_PROMPT",
    "ReviewJob",
    "ReviewOutcome",
    "ReviewSettings",
    "Reviewer",
    "render_digest",
    "review_messages",
    "spent_channel",
]
