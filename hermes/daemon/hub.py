"""A session's event hub that also keeps its recent events for ``since=`` replay.

The manager makes one ``RecordingHub`` per session and passes it to every
incarnation of the session actor, so subscribers (gateway clients) survive
session restarts. ``publish`` is synchronous and never blocks: the ring is a
bounded deque (oldest events fall off).

Replay is from memory only: after a daemon restart sequence numbers start
again at 1 under a new ``epoch`` (the daemon's boot id), and a client whose
epoch differs gets no replay. Persisted replay from the database is a later
step.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from hermes.session import EventHub, SessionEvent, Subscriber


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
    def __init__(self, session_id: str, ring: int) -> None:
        super().__init__(session_id)
        self.ring: deque[SessionEvent] = deque(maxlen=ring) if ring > 0 else deque(maxlen=0)

    def publish(self, payload: Any) -> SessionEvent:
        event = super().publish(payload)
        self.ring.append(event)
        return event

    def replay(self, since: int) -> Replay:
        """Events with ``seq > since`` still held (synchronous: no event can slip between)."""
        events = tuple(e for e in self.ring if e.seq > since)
        first = events[0].seq if events else self.seq + 1
        missed = max(0, first - since - 1)
        return Replay(events, missed)

    @contextmanager
    def subscribe_since(
        self, since: int | None, capacity: int, *, approvals: bool = False
    ) -> Iterator[tuple[Replay, Subscriber]]:
        """Replay what the client missed, then live events, with nothing lost in between."""
        replay = self.replay(since) if since is not None else Replay((), 0)
        with self.subscribe(capacity, approvals=approvals) as sub:
            yield replay, sub
