"""The replay ring keeps events packed (plain tuples the cyclic collector does not track)."""

from __future__ import annotations

import gc

from hermes import codec
from hermes.daemon.eventlog import EventLog
from hermes.daemon.hub import Held, RecordingHub, Sink
from hermes.session.events import TextDelta


def _hub(ring: int, sink: list[tuple[str, Held]] | None = None) -> RecordingHub:
    return RecordingHub("s1", ring, base=0, sink=None if sink is None else _append(sink))


def _append(out: list[tuple[str, Held]]) -> Sink:
    return lambda session, held: out.append((session, held))


def test_the_ring_holds_packed_untracked_tuples() -> None:
    hub = _hub(ring=3)
    for i in range(5):
        hub.publish(TextDelta(1, f"part {i}"))
    gc.collect()
    assert [item[0] for item in hub.ring] == [3, 4, 5]  # type: ignore[index]
    for item in hub.ring:
        assert isinstance(item, tuple) and not gc.is_tracked(item)
        seq, kind, payload = item
        assert kind == "TextDelta"
        assert codec.unpack(payload, TextDelta) == TextDelta(1, f"part {seq - 1}")


def test_replay_counts_what_fell_off_the_ring() -> None:
    hub = _hub(ring=3)
    for i in range(5):
        hub.publish(TextDelta(1, str(i)))
    replay = hub.replay(since=1)
    assert [item[0] for item in replay.events] == [3, 4, 5]  # type: ignore[index]
    assert replay.missed == 1
    assert hub.first_held == 3


def test_the_sink_gets_every_event_packed_once_even_without_a_ring() -> None:
    got: list[tuple[str, Held]] = []
    hub = _hub(ring=0, sink=got)
    hub.publish(TextDelta(2, "a"))
    hub.publish(TextDelta(2, "b"))
    assert not hub.ring
    assert [(s, seq, kind) for s, (seq, kind, _) in got] == [
        ("s1", 1, "TextDelta"),
        ("s1", 2, "TextDelta"),
    ]
    assert codec.unpack(got[1][1][2], TextDelta) == TextDelta(2, "b")


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
