"""A session's event hub that also keeps its recent events for ``since=`` replay.

The manager makes one ``RecordingHub`` per session and passes it to every
incarnation of the session actor, so subscribers (gateway clients) survive
session restarts. ``publish`` is synchronous and never blocks: the ring is a
bounded deque (oldest events fall off).

The ring is the fast path; older events come from the database (the
manager's ``EventLog`` writes every event in batches). A hub made after a
daemon restart continues the numbering from the last stored seq (``base``),
so ``since`` keeps its meaning; events the killed daemon never stored are
gone, and their seqs are given to new events (a client from the old
``epoch`` is replayed from ``base``).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from hermes.session import EventHub, SessionEvent, Subscriber
from hermes.session.events import ApprovalRequested, ApprovalResolved

RESOLVED_KEPT = 256
"""Answered approval requests remembered per session (for a clear error to late answers)."""


@attrs.frozen(slots=True)
class SessionEnded:
    """Published by the manager when a session is closed."""

    reason: str


@attrs.frozen(slots=True)
class Replay:
    events: tuple[SessionEvent, ...]
    missed: int
    """Events after ``since`` that are no longer in the ring (gone before replay)."""


class RecordingHub(EventHub):
    def __init__(self, session_id: str, ring: int, base: int = 0) -> None:
        super().__init__(session_id)
        self.seq = base
        self.base = base
        """The last seq stored in the database when this hub was made (numbering goes on
        from there, so a ``since`` stays meaningful across daemon restarts)."""
        self.ring: deque[SessionEvent] = deque(maxlen=ring) if ring > 0 else deque(maxlen=0)
        self.resolved: OrderedDict[int, str] = OrderedDict()
        """Approval request id -> the choice that settled it (the first answer)."""

    def publish(self, payload: Any) -> SessionEvent:
        if isinstance(payload, ApprovalResolved):
            self.resolved[payload.request_id] = payload.choice
            if len(self.resolved) > RESOLVED_KEPT:
                self.resolved.popitem(last=False)
        elif isinstance(payload, ApprovalRequested):
            self.resolved.pop(payload.request_id, None)  # ids restart with a new incarnation
        event = super().publish(payload)
        self.ring.append(event)
        return event

    def replay(self, since: int) -> Replay:
        """Events with ``seq > since`` still held (synchronous: no event can slip between)."""
        events = tuple(e for e in self.ring if e.seq > since)
        first = events[0].seq if events else self.seq + 1
        missed = max(0, first - since - 1)
        return Replay(events, missed)

    @property
    def first_held(self) -> int:
        """The oldest seq the ring still holds (``seq + 1`` when it holds none)."""
        return self.ring[0].seq if self.ring else self.seq + 1

    @contextmanager
    def subscribe_since(
        self, since: int | None, capacity: int, *, approvals: bool = False
    ) -> Iterator[tuple[Replay, Subscriber]]:
        """Replay what the client missed, then live events, with nothing lost in between."""
        replay = self.replay(since) if since is not None else Replay((), 0)
        with self.subscribe(capacity, approvals=approvals) as sub:
            yield replay, sub
