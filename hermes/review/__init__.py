"""The background reviewer: after some turns, a cancellable actor saves what is worth remembering.

| module | one job |
|---|---|
| ``settings.py`` | ``ReviewSettings``: interval, budgets, model |
| ``prompt.py`` | the review question; a digest of the transcript for another model |
| ``actor.py`` | ``ReviewerActor``: the review loop, writing to a ``MemoryDraft`` |

The session decides when to start one and kills it the moment new input
arrives (``hermes.session.reviews``); see ``docs/memory.md``.
"""

from .actor import ReviewerActor, ReviewJob, ReviewOutcome, StartReview
from .prompt import REVIEW_PROMPT, render_digest, review_messages
from .settings import ReviewSettings

__all__ = [
    "REVIEW_PROMPT",
    "ReviewJob",
    "ReviewOutcome",
    "ReviewSettings",
    "ReviewerActor",
    "StartReview",
    "render_digest",
    "review_messages",
]
