"""Supervisor events: start, exit (with reason), restart, failed restart, escalation, stale."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio
from trio.testing import MockClock

from actors import ActorSystem, ExitKind, LivenessSpec
from supervisors import (
    ChildExited,
    ChildRestartingEvent,
    ChildSpec,
    ChildStarted,
    Escalated,
    RestartFailed,
    StaleDetected,
)
from supervisors._events import AutoShutdownTriggered

from .helpers import Flaky, crash, ref_of, spec, start_sup

SUPERVISOR_EVENTS = (
    ChildStarted,
    ChildExited,
    ChildRestartingEvent,
    RestartFailed,
    Escalated,
    StaleDetected,
    AutoShutdownTriggered,
)


def sup_events(events: list[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, SUPERVISOR_EVENTS)]


def brief(event: Any) -> tuple[Any, ...]:
    """A comparable summary: type name, child id and the most telling field."""
    name = type(event).__name__
    if isinstance(event, ChildStarted):
        return (name, event.child_id, event.restarts)
    if isinstance(event, ChildExited | RestartFailed):
        return (name, event.child_id, event.reason.kind)
    if isinstance(event, Escalated):
        return (name, event.supervisor)
    return (name, event.child_id)


async def test_start_events_in_order(system: ActorSystem, autojump_clock: MockClock) -> None:
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        await start_sup(system, [spec("a"), spec("b")])
        events = sup_events(sub.drain())
    assert events == [
        ChildStarted("/sup", "a", "/sup/a", 0),
        ChildStarted("/sup", "b", "/sup/b", 0),
    ]


async def test_crash_publishes_exit_restart_and_start(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("a")])
        with system.events.subscribe(1000) as sub:
            await crash(client, "a")
            events = sup_events(sub.drain())
    assert [brief(e) for e in events] == [
        ("ChildExited", "a", ExitKind.ERROR),
        ("ChildRestarting", "a"),
        ("ChildStarted", "a", 1),
    ]
    exited, restarting, _ = events
    assert (exited.supervisor, exited.path) == ("/sup", "/sup/a")
    assert str(exited.reason.error) == "a crashed"
    assert restarting.delay == 0


async def test_terminate_child_publishes_its_exit(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("a")])
        with system.events.subscribe(1000) as sub:
            await client.terminate_child("a")
            events = sup_events(sub.drain())
    assert [brief(e) for e in events] == [("ChildExited", "a", ExitKind.SHUTDOWN)]


async def test_failed_restart_and_escalation_events(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    factory = Flaky("w")
    with trio.fail_after(10):
        sup, client = await start_sup(system, [ChildSpec("w", factory)], intensity=1)
        factory.fail_next = 10
        with system.events.subscribe(1000) as sub:
            await crash(client, "w", sync=False)
            reason = await sup.wait_exited()
            events = sup_events(sub.drain())
    assert [brief(e) for e in events] == [
        ("ChildExited", "w", ExitKind.ERROR),
        ("ChildRestarting", "w"),
        ("RestartFailed", "w", ExitKind.ERROR),
        ("Escalated", "/sup"),
    ]
    failed, escalated = events[2], events[3]
    assert failed.attempt == 1
    assert "w cannot start (call 2)" in failed.reason.detail
    assert reason.kind is ExitKind.SHUTDOWN and reason.error is None  # it gave up (OTP)
    assert "exceeded 1 restarts in 5s" in escalated.detail
    assert [cid for cid, _ in escalated.history] == ["w", "w"]
    assert escalated.child_id == "w" and escalated.reason == failed.reason


async def test_stale_detection_events(system: ActorSystem, autojump_clock: MockClock) -> None:
    liveness = LivenessSpec(interval=1, allowed_misses=0)
    with trio.fail_after(100):
        _, client = await start_sup(system, [spec("a", liveness=liveness)])
        ref = await ref_of(client, "a")
        with system.events.subscribe(1000) as sub:
            await ref.cast(("sleep", 100))
            await ref.wait_exited()
            await client.count_children()
            events = sup_events(sub.drain())
    assert [brief(e) for e in events] == [
        ("StaleDetected", "a"),
        ("ChildExited", "a", ExitKind.STALE),
        ("ChildRestarting", "a"),
        ("ChildStarted", "a", 1),
    ]
    assert events[0].heartbeat_age == events[1].reason.heartbeat_age


async def test_events_are_also_logged(
    system: ActorSystem, autojump_clock: MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="supervisors")
    with trio.fail_after(10):
        sup, client = await start_sup(system, [spec("a")], intensity=0)
        await crash(client, "a", sync=False)
        await sup.wait_exited()
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "supervisors"]
    assert any(lvl == logging.INFO and "ChildStarted(" in msg for lvl, msg in records)
    assert any(lvl == logging.WARNING and "ChildExited(" in msg for lvl, msg in records)
    assert any(lvl == logging.ERROR and "Escalated(" in msg for lvl, msg in records)
    assert all(msg.startswith("/sup: ") for _, msg in records)


async def test_supervisor_shutdown_publishes_each_child_exit(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        sup, _ = await start_sup(system, [spec("a"), spec("b")])
        with system.events.subscribe(1000) as sub:
            await sup.stop()
            events = sup_events(sub.drain())
    assert [brief(e) for e in events] == [
        ("ChildExited", "b", ExitKind.SHUTDOWN),
        ("ChildExited", "a", ExitKind.SHUTDOWN),
    ]
