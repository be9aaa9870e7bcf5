"""Replay of events the in-memory ring no longer holds, from the database.

``events.subscribe`` (and the HTTP event stream) first take the ring's replay
and the live subscription in one synchronous step; the events between
``since`` and the ring's oldest are then read from the ``events`` table
(written in batches by the manager's ``EventLog``) and sent before the
ring's. Whatever is in neither is reported as missed (``events.dropped``).
Both keep events packed (msgpack of the plain payload); a frame unpacks it.
"""

from __future__ import annotations

import logging
from typing import Any

import msgpack  # type: ignore[import-untyped]

from hermes.daemon.hub import Replay, RingItem, unhold
from hermes.daemon.manager import Entry
from hermes.session import SessionEvent
from hermes.store import StoreClient, StoreError
from hermes.store.event_queries import MAX_READ, ReadEvents, StoredEvent

from .protocol import event_frame, type_name

log = logging.getLogger("hermes.gateway.replay")


def packed_frame(session: str, path: str, seq: int, kind: str, payload: bytes) -> dict[str, Any]:
    """The frame of an event kept packed (``kind``: the payload's class name)."""
    return {
        "type": type_name(kind),
        "session": session,
        "path": path,
        "seq": seq,
        "payload": msgpack.unpackb(payload, raw=False, strict_map_key=False),
    }


def stored_frame(event: StoredEvent, path: str) -> dict[str, Any]:
    return packed_frame(event.session_id, path, event.seq, event.type, event.payload)


def ring_frame(item: RingItem, entry: Entry) -> dict[str, Any]:
    """The frame of an event replayed from the session's ring."""
    if isinstance(item, SessionEvent):
        return event_frame(item, entry.path)
    seq, kind, payload = unhold(item)
    return packed_frame(entry.session_id, entry.path, seq, kind, payload)


async def from_store(
    store: StoreClient, entry: Entry, since: int | None, replay: Replay
) -> tuple[list[dict[str, Any]], int]:
    """Frames of the events after ``since`` that the ring no longer held, and how many
    of those the database does not have either."""
    if since is None or replay.missed <= 0:
        return [], replay.missed
    first = since + replay.missed + 1  # the ring's oldest replayed seq (or the next one)
    request = ReadEvents(entry.session_id, after=since, before=first, limit=MAX_READ)
    try:
        rows = await store.request(request, timeout=10.0)
    except StoreError as exc:
        log.warning("replay of %s from the database failed: %s", entry.session_id, exc)
        return [], replay.missed
    return [stored_frame(row, entry.path) for row in rows], replay.missed - len(rows)
