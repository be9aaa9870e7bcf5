"""Merging text deltas for clients that fall behind.

A client keeping up gets every event as it is published. A client that is
behind (events were already waiting when the next one was taken) gets its
backlog in one go with adjacent text deltas of a turn merged, and, when the
next event is a text delta, the deltas of the following ``WINDOW`` seconds
merged into it too: one frame instead of dozens, so a slow link catches up
instead of falling further behind. A merged delta carries the seq of its last
part, so ``since=`` resumption stays exact.
"""

from __future__ import annotations

from typing import Protocol

import trio

from hermes.session import SessionEvent
from hermes.session.events import TextDelta

WINDOW = 0.03
"""Seconds a slow client's text delta waits for the next ones."""
MAX_BATCH = 256
"""Events taken at once."""
MAX_CHARS = 65536
"""A merged text delta stops growing here (frames stay well under the size limits)."""


class EventSource(Protocol):
    """What ``next_events`` reads: a subscriber's receiving end, or a memory channel."""

    def statistics(self) -> trio.MemoryChannelStatistics: ...
    def receive_nowait(self) -> SessionEvent: ...
    async def receive(self) -> SessionEvent: ...


async def next_events(receive: EventSource) -> list[SessionEvent]:
    """The next events to send (raises ``EndOfChannel`` when the subscription ended)."""
    behind = receive.statistics().current_buffer_used > 0
    batch = [await receive.receive()]
    if behind and isinstance(batch[0].payload, TextDelta):
        with trio.move_on_after(WINDOW):
            while len(batch) < MAX_BATCH and isinstance(batch[-1].payload, TextDelta):
                try:
                    batch.append(await receive.receive())
                except trio.EndOfChannel:
                    break
    while len(batch) < MAX_BATCH:
        try:
            batch.append(receive.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            break
    return merge_deltas(batch)


def merge_deltas(batch: list[SessionEvent]) -> list[SessionEvent]:
    """``batch`` with adjacent text deltas of the same turn merged (up to ``MAX_CHARS``)."""
    if len(batch) == 1:
        return batch
    out: list[SessionEvent] = []
    for event in batch:
        last = out[-1] if out else None
        payload = event.payload
        if (
            last is not None
            and isinstance(payload, TextDelta)
            and isinstance(last.payload, TextDelta)
            and last.payload.turn == payload.turn
            and len(last.payload.text) + len(payload.text) <= MAX_CHARS
        ):
            merged = TextDelta(payload.turn, last.payload.text + payload.text)
            out[-1] = SessionEvent(event.session, event.seq, merged)
        else:
            out.append(event)
    return out
