"""The ``events`` table: a session's published events, for ``since=`` replay across restarts.

The daemon's manager writes them in batches (``AppendEvents``, at most a few
hundred small rows: it runs as a small write on the store's loop); the
gateway reads a range back (``ReadEvents``) when a client asks for events
older than the manager's in-memory ring, or from before a daemon restart.
``LastEventSeq`` lets a session's new hub continue the numbering where the
database stopped. Each session keeps its newest ``keep`` events.

The requests live here with their SQL (one module, each registered
with ``operation``); callers send them with ``StoreClient.request``.
"""

from __future__ import annotations

from typing import ClassVar

import apsw
import attrs

from .errors import InvalidRequest
from .operations import Abort, operation
from .requests import Read, SideWrite

MAX_READ = 10_000
"""Most rows one ``ReadEvents`` returns."""


@attrs.frozen(slots=True)
class StoredEvent:
    session_id: str
    seq: int
    type: str
    """The payload's class name (``TextDelta``)."""
    at: float
    payload: bytes
    """msgpack of the payload as plain data."""


@attrs.frozen(slots=True)
class AppendEvents(SideWrite[int]):
    """Store a batch (any sessions); rows already stored (same session and seq) are replaced."""

    op: ClassVar[str] = "append_events"

    events: tuple[StoredEvent, ...]
    keep: int = 20_000
    """Per session, only the newest ``keep`` events are kept."""


@attrs.frozen(slots=True)
class ReadEvents(Read[list[StoredEvent]]):
    """A session's events with ``after < seq < before``, oldest first (at most ``limit``)."""

    op: ClassVar[str] = "read_events"

    session_id: str
    after: int
    before: int | None = None
    limit: int = MAX_READ


@attrs.frozen(slots=True)
class LastEventSeq(Read[int]):
    """The highest stored seq of a session (0 without any)."""

    op: ClassVar[str] = "last_event_seq"

    session_id: str


@operation(AppendEvents)
def append_events(conn: apsw.Connection, req: AppendEvents, abort: Abort) -> int:
    if req.keep < 1:
        raise InvalidRequest(req.op, f"keep must be >= 1, got {req.keep}")
    newest: dict[str, int] = {}
    for event in req.events:
        abort.check(req.op)
        conn.execute(
            "INSERT OR REPLACE INTO events (session_id, seq, type, at, payload) "
            "VALUES (?, ?, ?, ?, ?)",
            (event.session_id, event.seq, event.type, event.at, event.payload),
        )
        newest[event.session_id] = max(event.seq, newest.get(event.session_id, 0))
    for session_id, seq in newest.items():
        if seq > req.keep:  # a younger session has nothing to prune: skip the statement
            conn.execute(
                "DELETE FROM events WHERE session_id = ? AND seq <= ?",
                (session_id, seq - req.keep),
            )
    return len(req.events)


@operation(ReadEvents)
def read_events(conn: apsw.Connection, req: ReadEvents, abort: Abort) -> list[StoredEvent]:
    if not 1 <= req.limit <= MAX_READ:
        raise InvalidRequest(req.op, f"limit must be from 1 to {MAX_READ}, got {req.limit}")
    before = req.before if req.before is not None else 2**62
    rows = conn.execute(
        "SELECT session_id, seq, type, at, payload FROM events "
        "WHERE session_id = ? AND seq > ? AND seq < ? ORDER BY seq LIMIT ?",
        (req.session_id, req.after, before, req.limit),
    )
    return [StoredEvent(r[0], int(r[1]), r[2], float(r[3]), bytes(r[4])) for r in rows]


@operation(LastEventSeq)
def last_event_seq(conn: apsw.Connection, req: LastEventSeq, abort: Abort) -> int:
    value = conn.execute("SELECT max(seq) FROM events WHERE session_id = ?", (req.session_id,)).get
    return int(value or 0)
