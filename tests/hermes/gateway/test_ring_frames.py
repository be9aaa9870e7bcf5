"""A replayed (packed) event goes on the wire exactly as the live event did."""

from __future__ import annotations

from typing import Any

from hermes.daemon.hub import RecordingHub
from hermes.daemon.manager import Entry
from hermes.gateway import protocol
from hermes.gateway.replay import ring_frame
from hermes.session import SessionEvent
from hermes.session.events import EventsLost, TextDelta, TurnStarted


def _entry(hub: RecordingHub) -> Entry:
    handle: Any = None  # ring_frame reads only the session id and the path
    return Entry(hub.session_id, handle, hub, "/hermes/sessions/sup/session-s1", None)


def test_a_replayed_event_is_the_live_frame() -> None:
    hub = RecordingHub("s1", 10)
    entry = _entry(hub)
    live = [
        hub.publish(TurnStarted(2, "tell me")),
        hub.publish(TextDelta(2, "héllo")),
        hub.publish(TextDelta(2, "")),
    ]
    replayed = [ring_frame(item, entry) for item in hub.replay(since=0).events]
    assert replayed == [protocol.event_frame(e, entry.path) for e in live]
    for binary in (False, True):
        assert [protocol.encode(f, binary) for f in replayed] == [
            protocol.encode(protocol.event_frame(e, entry.path), binary) for e in live
        ]


def test_an_unpacked_event_in_the_ring_still_replays() -> None:
    hub = RecordingHub("s1", 10)
    event = SessionEvent("s1", 7, TextDelta(1, "x"))
    assert ring_frame(event, _entry(hub)) == protocol.event_frame(event, _entry(hub).path)


def test_events_lost_keeps_its_wire_name() -> None:
    assert protocol.type_name("EventsLost") == "events.dropped"
    assert protocol.event_type(EventsLost(3)) == "events.dropped"
