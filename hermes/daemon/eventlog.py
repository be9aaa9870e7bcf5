"""Sessions' events to the database, in batches, for ``since=`` replay across restarts.

    sessions            SessionsManager
    |-- events          EventWriter: drains the EventLog into the store, batch by batch
    `-- sup             ...

Every session hub the manager makes hands its events, already packed (the
ring's ``Held`` bytes, see ``hub.py``), to ``EventLog.add`` (synchronous,
never blocks the session: a bounded buffer of plain tuples, which the cyclic
collector does not track; beyond it events are counted as dropped and only
the in-memory ring has them). The first event
after a flush casts one ``_Flush`` to the writer (never more than one
queued, so the writer stays idle in its mailbox loop between flushes and a
graceful stop is served at once); it waits ``FLUSH_DELAY`` to gather more
and writes them in batches of at most ``BATCH_EVENTS`` events / ``BATCH_BYTES`` bytes
(small writes: the store runs them on its loop). The daemon's shutdown calls
``FlushEvents`` once the turns are cancelled, so their last events are stored
before the store checkpoints; it is also started before the sessions'
supervisor, so at the tree's stop it stops after the sessions and writes what
they published since.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import deque

import attrs
import trio

from actors import Actor, ActorRef, Call, ExitReason, MailboxFull
from hermes.store import StoreClient, StoreError
from hermes.store.event_queries import AppendEvents, StoredEvent

from .hub import Held, unhold

log = logging.getLogger("hermes.daemon.events")

FLUSH_DELAY = 0.05
BATCH_EVENTS = 64
"""Events per store request: a batch is written on the event loop (a small write), so it
is kept to about a millisecond of the loop's time; the writer yields between batches."""
BATCH_BYTES = 256 * 1024
BUFFER = 50_000
STOP_FLUSH_TIMEOUT = 5.0


class EventLog:
    """The buffer between session hubs (synchronous observers) and the writer."""

    def __init__(self, keep: int, capacity: int = BUFFER) -> None:
        self.keep = keep
        self.capacity = capacity
        self.pending: deque[tuple[str, Held, float]] = deque()
        self.dropped = 0
        self.written = 0
        self.writer: ActorRef | None = None
        self.flush_queued = False

    @property
    def enabled(self) -> bool:
        return self.keep > 0

    def add(self, session: str, held: Held) -> None:
        """Queue one packed event of ``session`` (a hub's sink)."""
        if not self.enabled:
            return
        if len(self.pending) >= self.capacity:
            self.dropped += 1
            return
        self.pending.append((session, held, time.time()))
        if not self.flush_queued and self.writer is not None:
            with contextlib.suppress(MailboxFull):  # full: the next event tries again
                self.flush_queued = self.writer.cast_nowait(_Flush())

    def batch(self) -> list[StoredEvent]:
        """Up to a batch's worth of pending events."""
        out: list[StoredEvent] = []
        size = 0
        while self.pending and len(out) < BATCH_EVENTS and size < BATCH_BYTES:
            session, held, at = self.pending.popleft()
            seq, kind, payload = unhold(held)
            out.append(StoredEvent(session, seq, kind, at, payload))
            size += len(payload) + 64
        return out


@attrs.frozen(slots=True)
class _Flush:
    pass


@attrs.frozen(slots=True)
class FlushEvents(Call[int]):
    """Write every pending event now; answered with how many were written in all."""


class EventWriter(Actor):
    """Writes the ``EventLog`` to the store when told; at its stop, writes what is left."""

    def __init__(self, events: EventLog, store: StoreClient) -> None:
        self.events = events
        self.store = store

    async def on_start(self) -> None:
        self.events.writer = self.ctx.self
        self.events.flush_queued = False
        if self.events.pending:
            self.events.flush_queued = self.ctx.self.cast_nowait(_Flush())

    async def receive(self, message: object) -> int | None:
        if isinstance(message, _Flush):
            await trio.sleep(FLUSH_DELAY)
            self.events.flush_queued = False  # events from now on ask for the next flush
            await self._flush()
        elif isinstance(message, FlushEvents):
            await self._flush()
            return self.events.written
        return None

    async def _flush(self) -> None:
        while batch := self.events.batch():
            try:
                self.events.written += await self.store.request(
                    AppendEvents(tuple(batch), keep=self.events.keep)
                )
            except StoreError as exc:
                self.events.dropped += len(batch)
                log.warning("%d events not stored: %s", len(batch), exc)

    async def on_stop(self, reason: ExitReason) -> None:
        with trio.move_on_after(STOP_FLUSH_TIMEOUT):
            await self._flush()
        if self.events.pending:
            log.warning("%d events not stored at shutdown", len(self.events.pending))
