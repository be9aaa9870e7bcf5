"""Replay of events the in-memory ring no longer holds, from the database.

``events.subscribe`` (and the HTTP event stream) first take the ring's replay
and the live subscription in one synchronous step; the events between
``since`` and the ring's oldest are then read from the ``events`` table
(written in batches by the manager's ``EventLog``) and sent before the
ring's. Whatever is in neither is reported as missed (``events.dropped``).
"""

from __future__ import annotations

import logging
from typing import Any

import msgpack  # type: ignore[import-untyped]

from hermes.daemon.hub import Replay
from hermes.daemon.manager import Entry
from hermes.store import StoreClient, StoreError
from hermes.store.event_queries import MAX_READ, ReadEvents, StoredEvent

from .protocol import type_name

log = logging.getLogger("hermes.gateway.replay")


def stored_frame(event: StoredEvent, path: str) -> dict[str, Any]:
    return {
        "type": type_name(event.type),
        "session": event.session_id,
        "path": path,
        "seq": event.seq,
        "payload": msgpack.unpackb(event.payload, raw=False, strict_map_key=False),
    }


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
        rows: list[StoredEvent] = await store.request(request, timeout=10.0)
    except StoreError as exc:
        log.warning("replay of %s from the database failed: %s", entry.session_id, exc)
        return [], replay.missed
    return [stored_frame(row, entry.path) for row in rows], replay.missed - len(rows)
