"""A session's event hub that also keeps its recent events for ``since=`` replay.

The manager makes one ``RecordingHub`` per session and passes it to every
incarnation of the session actor, so subscribers (gateway clients) survive
session restarts. ``publish`` is synchronous and never blocks: the ring is a
bounded deque (oldest events fall off).

The ring is the fast path; older events come from the database (the
manager's ``EventLog`` writes every event in batches). The ring holds each
event packed once, as one ``bytes`` object (``Held``: seq, type and the msgpack
payload), and hands the same bytes to the ``EventLog``. Bytes are never
tracked by the cyclic collector. (A ``(seq, type, payload)`` tuple is, until
the first collection that sees it untracks it: with 100 busy sessions that was
14-16k tuples, a sixth of every young collection's objects.) The 2,000 events a session keeps
as attrs objects (``SessionEvent`` and its payload, 200,000 of them with 100
busy sessions) lived ~100 s and were traversed by every young and gen1
collection on their way to the old generation (``bench gateway``: 15k of the
~100k objects in a young collection of 60-90 ms). A hub made after a
daemon restart continues the numbering from the last stored seq (``base``),
so ``since`` keeps its meaning; events the killed daemon never stored are
gone, and their seqs are given to new events (a client from the old
``epoch`` is replayed from ``base``).
"""

from __future__ import annotations

import logging
import struct
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from hermes import codec
from hermes.session import EventHub, SessionEvent, Subscriber
from hermes.session.events import ApprovalRequested, ApprovalResolved, EventsLost

log = logging.getLogger("hermes.daemon.hub")

Held = bytes
"""An event as the ring keeps it: a header (seq, length of the payload's class name),
the class name, then the msgpack of the payload; ``unhold`` takes it apart."""
RingItem = Held | SessionEvent
"""A ``Held`` event, or (rarely) the event itself when its payload cannot be packed."""
Sink = Callable[[str, Held], None]
"""Takes every packed event (the ``EventLog``): ``sink(session_id, held)``."""

RESOLVED_KEPT = 256
"""Answered approval requests remembered per session (for a clear error to late answers)."""


@attrs.frozen(slots=True)
class SessionEnded:
    """Published by the manager when a session is closed."""

    reason: str


@attrs.frozen(slots=True)
class Replay:
    events: tuple[RingItem, ...]
    missed: int
    """Events after ``since`` that are no longer in the ring (gone before replay)."""


_HEAD = struct.Struct("<QB")
"""A held event's header: its seq and the length of its type name."""


def item_seq(item: RingItem) -> int:
    if isinstance(item, SessionEvent):
        return item.seq
    seq: int = _HEAD.unpack_from(item)[0]
    return seq


def hold(event: SessionEvent) -> Held | None:
    """``event`` packed for the ring and the database; ``None`` if it cannot be packed."""
    kind = event.type.encode()
    if len(kind) > 255 or not 0 <= event.seq < 2**64:
        log.warning(
            "event %s of %s not packed: type name or seq out of range", event.type, event.session
        )
        return None
    try:
        return _HEAD.pack(event.seq, len(kind)) + kind + codec.pack(event.payload)
    except codec.CodecError as exc:
        log.warning("event %s of %s not packed: %s", event.type, event.session, exc)
        return None


def unhold(held: Held) -> tuple[int, str, bytes]:
    """``(seq, payload class name, msgpack of the payload)`` of a held event."""
    seq, size = _HEAD.unpack_from(held)
    start = _HEAD.size + size
    return seq, held[_HEAD.size : start].decode(), held[start:]


class RecordingHub(EventHub):
    def __init__(self, session_id: str, ring: int, base: int = 0, sink: Sink | None = None) -> None:
        super().__init__(session_id)
        self.sink = sink
        """Called with each packed event (the manager's ``EventLog``); ``None``: no one."""
        self.seq = base
        self.base = base
        """The last seq stored in the database when this hub was made (numbering goes on
        from there, so a ``since`` stays meaningful across daemon restarts)."""
        self.ring: deque[RingItem] = deque(maxlen=max(ring, 0))
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
        if self.ring.maxlen or self.sink is not None:
            self._record(event)
        return event

    def _record(self, event: SessionEvent) -> None:
        held = hold(event)
        if held is None:
            if self.ring.maxlen:
                self.ring.append(event)  # live replay still has it; the database will not
            return
        if self.ring.maxlen:
            self.ring.append(held)
        if self.sink is not None and not isinstance(event.payload, EventsLost):
            self.sink(self.session_id, held)

    def replay(self, since: int) -> Replay:
        """Events with ``seq > since`` still held (synchronous: no event can slip between)."""
        events = tuple(e for e in self.ring if item_seq(e) > since)
        first = item_seq(events[0]) if events else self.seq + 1
        missed = max(0, first - since - 1)
        return Replay(events, missed)

    @property
    def first_held(self) -> int:
        """The oldest seq the ring still holds (``seq + 1`` when it holds none)."""
        return item_seq(self.ring[0]) if self.ring else self.seq + 1

    @contextmanager
    def subscribe_since(
        self, since: int | None, capacity: int, *, approvals: bool = False
    ) -> Iterator[tuple[Replay, Subscriber]]:
        """Replay what the client missed, then live events, with nothing lost in between."""
        replay = self.replay(since) if since is not None else Replay((), 0)
        with self.subscribe(capacity, approvals=approvals) as sub:
            yield replay, sub
