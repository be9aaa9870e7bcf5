"""The replay ring keeps events packed (bytes, which the cyclic collector never tracks)."""

from __future__ import annotations

import gc

from hermes import codec
from hermes.daemon.eventlog import EventLog
from hermes.daemon.hub import Held, RecordingHub, Sink, item_seq, unhold
from hermes.session.events import TextDelta


def _hub(ring: int, sink: list[tuple[str, Held]] | None = None) -> RecordingHub:
    return RecordingHub("s1", ring, base=0, sink=None if sink is None else _append(sink))


def _append(out: list[tuple[str, Held]]) -> Sink:
    return lambda session, held: out.append((session, held))


def test_the_ring_holds_packed_untracked_bytes() -> None:
    hub = _hub(ring=3)
    for i in range(5):
        hub.publish(TextDelta(1, f"part {i}"))
    # Untracked from the start, not only once a collection has seen them.
    assert [item_seq(item) for item in hub.ring] == [3, 4, 5]
    for item in hub.ring:
        assert isinstance(item, bytes) and not gc.is_tracked(item)
        seq, kind, payload = unhold(item)
        assert kind == "TextDelta"
        assert codec.unpack(payload, TextDelta) == TextDelta(1, f"part {seq - 1}")


def test_replay_counts_what_fell_off_the_ring() -> None:
    hub = _hub(ring=3)
    for i in range(5):
        hub.publish(TextDelta(1, str(i)))
    replay = hub.replay(since=1)
    assert [item_seq(item) for item in replay.events] == [3, 4, 5]
    assert replay.missed == 1
    assert hub.first_held == 3


def test_the_sink_gets_every_event_packed_once_even_without_a_ring() -> None:
    got: list[tuple[str, Held]] = []
    hub = _hub(ring=0, sink=got)
    hub.publish(TextDelta(2, "a"))
    hub.publish(TextDelta(2, "b"))
    assert not hub.ring
    assert [(s, *unhold(held)[:2]) for s, held in got] == [
        ("s1", 1, "TextDelta"),
        ("s1", 2, "TextDelta"),
    ]
    assert codec.unpack(unhold(got[1][1])[2], TextDelta) == TextDelta(2, "b")


def test_the_event_log_batches_held_events_as_stored_rows() -> None:
    log = EventLog(keep=100)
    hub = RecordingHub("s1", 10, sink=log.add)
    for i in range(3):
        hub.publish(TextDelta(1, str(i)))
    rows = log.batch()
    assert [(r.session_id, r.seq, r.type) for r in rows] == [
        ("s1", i, "TextDelta") for i in (1, 2, 3)
    ]
    assert codec.unpack(rows[0].payload, TextDelta) == TextDelta(1, "0")
    assert not log.pending
