"""Liveness: a child whose heartbeat goes stale is cancelled (reason stale) and restarted."""

from __future__ import annotations

import pytest
import trio
from trio.testing import MockClock

from actors import ActorSystem, ExitKind, LivenessSpec, UnkillableReported
from supervisors import (
    ChildExited,
    ChildStarted,
    Escalated,
    Restart,
    StaleDetected,
)

from .helpers import Log, next_event, of_type, ref_of, spec, start_sup, states

LIVENESS = LivenessSpec(interval=1, allowed_misses=2)  # stale after 3 s without a heartbeat


async def test_stuck_child_is_cancelled_as_stale_and_restarted(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(100):
        _, client = await start_sup(system, [spec("w", log, liveness=LIVENESS)])
        await trio.sleep(10.5)  # idle: it answers the probes, so it stays fresh
        old = await ref_of(client, "w")
        with system.events.subscribe(1000) as sub:
            stuck_at = trio.current_time()
            await old.cast(("sleep", 1000))  # stuck without beating
            reason = await old.wait_exited()
            detected_after = trio.current_time() - stuck_at
            await client.count_children()  # served once the stale notice is handled
            events = sub.drain()
    # Probes come every second; the first one finding the heartbeat older than 3 s.
    assert detected_after == pytest.approx(3.5)
    assert reason.kind is ExitKind.STALE
    assert reason.heartbeat_age == pytest.approx(3.5)
    assert reason.by == "/sup"
    [stale] = of_type(events, StaleDetected)
    assert (stale.supervisor, stale.child_id, stale.path) == ("/sup", "w", "/sup/w")
    assert stale.heartbeat_age == pytest.approx(3.5)
    [exited] = [e for e in of_type(events, ChildExited) if e.child_id == "w"]
    assert exited.reason.kind is ExitKind.STALE
    [started] = [e for e in of_type(events, ChildStarted) if e.child_id == "w"]
    assert started.restarts == 1
    new = await ref_of(client, "w")
    assert new != old
    assert await new.call("ping") == ("pong", "w", 1)


async def test_beating_child_is_not_stale_and_last_activity_is_reported(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(100), system.events.subscribe(1000) as sub:
        _, client = await start_sup(system, [spec("w", liveness=LIVENESS)])
        ref = await ref_of(client, "w")
        start = trio.current_time()
        await ref.cast(("beat-then-hang", 20, 0.5, "thinking", 1000))
        stale = await next_event(sub, StaleDetected)
        # 20 s of beats kept it fresh; then 3 s of silence made it stale.
        assert trio.current_time() - start == pytest.approx(23.5, abs=0.6)
    assert stale.last_activity == "thinking"
    assert stale.heartbeat_age > 3


@pytest.mark.parametrize(
    ("restart", "expected"),
    [(Restart.TRANSIENT, {"w": "running"}), (Restart.TEMPORARY, {})],
)
async def test_stale_exit_follows_the_restart_type(
    system: ActorSystem, autojump_clock: MockClock, restart: Restart, expected: dict[str, str]
) -> None:
    with trio.fail_after(100):
        _, client = await start_sup(system, [spec("w", liveness=LIVENESS, restart=restart)])
        ref = await ref_of(client, "w")
        await ref.cast(("sleep", 1000))
        reason = await ref.wait_exited()
        assert reason.kind is ExitKind.STALE
        assert await states(client) == expected


async def test_stale_exits_count_toward_restart_intensity(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(100), system.events.subscribe(1000) as sub:
        sup, client = await start_sup(system, [spec("w", liveness=LIVENESS)], intensity=0)
        ref = await ref_of(client, "w")
        await ref.cast(("sleep", 1000))
        reason = await sup.wait_exited()
        (escalated,) = [e for e in sub.drain() if isinstance(e, Escalated)]
    assert reason.kind is ExitKind.SHUTDOWN
    [(child_id, stale)] = escalated.history
    assert child_id == "w"
    assert stale.kind is ExitKind.STALE
    assert stale.heartbeat_age == pytest.approx(3.5, abs=0.6)


async def test_stale_child_ignoring_cancellation_is_reported_and_replaced(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(100), system.events.subscribe(1000) as sub:
        _, client = await start_sup(system, [spec("w", liveness=LIVENESS)])
        ref = await ref_of(client, "w")
        await ref.cast(("shielded", 30))
        await next_event(sub, StaleDetected)
        detected = trio.current_time()
        await client.count_children()  # served once the stale notice is handled
        # The supervisor waited about the system's kill grace (1 s), then moved on.
        assert 1.0 <= trio.current_time() - detected <= 1.2
        events = sub.drain()
        reports = of_type(events, UnkillableReported)
        [started] = of_type(events, ChildStarted)
        assert (started.path, started.restarts) == ("/sup/w", 1)
        assert ref.is_alive  # still stuck in its shielded sleep
        assert system.unkillable() == [ref]
        assert await (await ref_of(client, "w")).call("ping") == ("pong", "w", 1)
    assert [r.path for r in reports] == ["/sup/w"]
