"""Input waiting for a session's next turn: the bounded queue of pending prompts.

Prompts queued by the busy mode, steers a finished turn handed back, and
machine input (process notices, background delegation results) wait here in
order. The queue is bounded (``queue_limit``, 32); a full queue refuses a
prompt with ``QueueFull``. Cancelling the session drops what waits and says so.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import attrs

from actors import Reply

from . import events as ev
from .errors import InvalidInput, QueueFull, SessionError
from .messages import MachineInput


@attrs.define(slots=True)
class PendingInput:
    text: str
    waiter: Reply | None = None
    """The caller waiting for the ``TurnResult`` of the turn that runs this input."""
    delivered: MachineInput | None = None
    """Machine input whose ``on_delivered`` runs once a turn took the text."""


class InputQueue:
    """FIFO of ``PendingInput``, at most ``limit`` long; publishes ``InputQueued``."""

    def __init__(self, limit: int, hub: ev.EventHub, session_id: str) -> None:
        self.limit = limit
        self.hub = hub
        self.session_id = session_id
        self._items: deque[PendingInput] = deque()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def full(self) -> bool:
        return len(self._items) >= self.limit

    def add(self, item: PendingInput) -> int:
        """Queue ``item`` last; returns its position (1 = next). ``QueueFull`` when full."""
        if self.full:
            raise QueueFull(
                f"{self.limit} prompts are already waiting in session {self.session_id}"
            )
        self._items.append(item)
        self.hub.publish(ev.InputQueued(len(self._items), item.text))
        return len(self._items)

    def hand_back(self, texts: Iterable[str]) -> None:
        """Steers a turn could not deliver: they run next, as one input."""
        texts = list(texts)
        if texts:
            self._items.appendleft(PendingInput("\n\n".join(texts)))

    def pop(self) -> PendingInput | None:
        return self._items.popleft() if self._items else None

    def drop_all(self, reason: str) -> tuple[str, ...]:
        """Empty the queue; waiting callers get a ``SessionError``; returns the dropped texts."""
        dropped = tuple(item.text for item in self._items)
        for item in self._items:
            if item.waiter is not None:
                item.waiter.fail(SessionError(f"dropped: {reason}"))
        self._items.clear()
        return dropped


def checked_text(text: object, what: str) -> str:
    """``text`` if it is a non-blank string; ``InvalidInput`` naming ``what`` otherwise."""
    if not isinstance(text, str):
        raise InvalidInput(f"{what} text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InvalidInput(f"{what} text is empty")
    return text
