"""Restart intensity, escalation, failing restarts and backoff (exact virtual times)."""

from __future__ import annotations

import random

import pytest
import trio
from trio.testing import MockClock

from actors import ActorSystem, ExitKind, Subscription
from supervisors import (
    Backoff,
    ChildRestartingEvent,
    ChildSpec,
    ChildStarted,
    ChildType,
    Escalated,
    RestartFailed,
    Supervisor,
    SupervisorClient,
    gave_up,
)

from .helpers import Flaky, Log, crash, next_event, of_type, ref_of, spec, start_sup, states

FLAT = Backoff(min=1, max=1, random_factor=0)


async def test_exceeding_intensity_stops_children_in_reverse_and_escalates(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        sup, client = await start_sup(system, [spec(c, log) for c in "abc"], intensity=2, period=5)
        await crash(client, "b")
        await crash(client, "b")
        del log[:]
        await crash(client, "b", sync=False)
        reason = await sup.wait_exited()
        (event,) = of_type(sub.drain(), Escalated)
    assert log == [
        ("stop", "b", ExitKind.ERROR),
        ("stop", "c", ExitKind.SHUTDOWN),
        ("stop", "a", ExitKind.SHUTDOWN),
    ]
    assert reason.kind is ExitKind.SHUTDOWN and gave_up(reason)  # OTP: it exits shutdown
    assert (event.supervisor, event.intensity, event.period) == ("/sup", 2, 5)
    assert [(cid, r.kind) for cid, r in event.history] == [("b", ExitKind.ERROR)] * 3
    assert all(str(r.error) == "b crashed" for _, r in event.history)
    assert "exceeded 2 restarts in 5s" in event.detail


async def test_restarts_spread_beyond_the_period_never_escalate(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(100):
        sup, client = await start_sup(system, [spec("a")], intensity=1, period=5)
        for _ in range(5):
            await crash(client, "a")
            await trio.sleep(5.5)
        assert sup.is_alive
        assert (await client.which_children())[0].restarts == 5
        await crash(client, "a")
        await crash(client, "a", sync=False)  # two within 5 s
        reason = await sup.wait_exited()
    assert gave_up(reason)


async def test_intensity_zero_escalates_on_the_first_exit(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        sup, client = await start_sup(system, [spec("a")], intensity=0)
        await crash(client, "a", sync=False)
        reason = await sup.wait_exited()
        (event,) = of_type(sub.drain(), Escalated)
    assert gave_up(reason)
    assert len(event.history) == 1


async def test_escalation_through_two_levels_of_supervisors(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []

    def inner() -> Supervisor:
        return Supervisor([spec("w", log)], intensity=1, period=5)

    root_specs = [spec("x", log), ChildSpec("inner", inner, type=ChildType.SUPERVISOR)]
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        root, root_client = await start_sup(system, root_specs, name="root", intensity=1)
        first_inner = await ref_of(root_client, "inner")
        client = SupervisorClient(first_inner)
        await crash(client, "w")
        await crash(client, "w", sync=False)  # inner exceeds 1 restart in 5 s
        inner_reason = await first_inner.wait_exited()
        assert gave_up(inner_reason)
        await root_client.count_children()
        # The root restarted the inner supervisor (its one allowed restart).
        second_inner = await ref_of(root_client, "inner")
        assert second_inner != first_inner
        client = SupervisorClient(second_inner)
        assert await (await ref_of(client, "w")).call("ping") == ("pong", "w", 0)
        del log[:]
        await crash(client, "w")
        await crash(client, "w", sync=False)
        root_reason = await root.wait_exited()
        escalations = of_type(sub.drain(), Escalated)
    assert gave_up(root_reason)
    assert [e.supervisor for e in escalations] == ["/root/inner", "/root/inner", "/root"]
    # The root counted the inner supervisor's exits: shutdown, it gave up (a permanent
    # child is restarted whatever its reason).
    assert [cid for cid, _ in escalations[-1].history] == ["inner", "inner"]
    assert all(gave_up(reason) for _, reason in escalations[-1].history)
    # Second round: w crashed, restarted, crashed; the inner stopped, then the root stopped x.
    assert log == [
        ("stop", "w", ExitKind.ERROR),
        ("start", "w"),
        ("stop", "w", ExitKind.ERROR),
        ("stop", "x", ExitKind.SHUTDOWN),
    ]


async def test_failing_restart_is_retried_and_every_attempt_counts(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    factory = Flaky("w")
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        sup, client = await start_sup(system, [ChildSpec("w", factory)], intensity=3, period=5)
        factory.fail_next = 100
        await crash(client, "w", sync=False)
        reason = await sup.wait_exited()
        events = sub.drain()
    # One restart for the crash plus three failed attempts: the fourth count exceeds 3.
    assert factory.calls == 1 + 3
    assert [e.attempt for e in of_type(events, RestartFailed)] == [1, 2, 3]
    assert all(e.reason.kind is ExitKind.ERROR for e in of_type(events, RestartFailed))
    assert gave_up(reason)
    (escalated,) = of_type(events, Escalated)
    assert [str(r.error) for _, r in escalated.history] == [
        "w crashed",
        "w cannot start (call 2)",
        "w cannot start (call 3)",
        "w cannot start (call 4)",
    ]


async def test_restart_that_fails_a_few_times_then_succeeds(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    factory = Flaky("w")
    sup, client = await start_sup(system, [ChildSpec("w", factory)], intensity=10, period=5)
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        factory.fail_next = 4
        await crash(client, "w", sync=False)
        failed = [(await next_event(sub, RestartFailed)).attempt for _ in range(4)]
        started = await next_event(sub, ChildStarted, child_id="w")
        assert sup.is_alive
    assert failed == [1, 2, 3, 4]
    assert factory.calls == 1 + 4 + 1
    assert started.restarts == 5  # every attempt counted
    assert await states(client) == {"w": "running"}


async def test_retrying_child_shows_restarting_while_supervisor_answers(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    factory = Flaky("w")
    with trio.fail_after(100):
        _, client = await start_sup(
            system, [ChildSpec("w", factory), spec("x")], intensity=20, period=100, backoff=FLAT
        )
        factory.fail_next = 1000
        await crash(client, "w")
        await trio.sleep(0.5)
        for second in range(1, 6):
            await trio.sleep(1)  # at t + 1.5, 2.5, ...: between two attempts
            assert factory.calls == 1 + second  # one attempt per backoff delay
            rows = {c.id: (c.state, c.ref) for c in await client.which_children()}
            assert rows["w"] == ("restarting", None)
            assert rows["x"][0] == "running"
            assert (await client.count_children()).active == 1
        factory.fail_next = 0
        await trio.sleep(1)
        assert await states(client) == {"w": "running", "x": "running"}


async def test_restart_loop_is_ended_by_terminate_child(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    factory = Flaky("w")
    with trio.fail_after(100):
        sup, client = await start_sup(
            system, [ChildSpec("w", factory)], intensity=1000, period=5, backoff=FLAT
        )
        factory.fail_next = 10**9
        await crash(client, "w")
        await trio.sleep(2.5)
        assert factory.calls == 3
        assert (await states(client))["w"] == "restarting"
        await client.terminate_child("w")
        assert await states(client) == {"w": "stopped"}
        await trio.sleep(10)
        assert factory.calls == 3  # no attempt after terminate_child
        assert sup.is_alive
        assert (await client.get_childspec("w")).id == "w"  # a permanent spec is kept
        factory.fail_next = 0
        handle = await client.restart_child("w")
        assert handle is not None and handle.ref is not None
        assert (await handle.ref.call("ping"))[:2] == ("pong", "w")


async def test_zero_delay_restart_loop_leaves_supervisor_responsive(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    factory = Flaky("w")
    sup, client = await start_sup(
        system, [ChildSpec("w", factory), spec("x")], intensity=1000, period=5
    )
    factory.fail_next = 10**9
    with trio.fail_after(10):
        await crash(client, "w", sync=False)
        assert await states(client) == {"w": "restarting", "x": "running"}
        await client.terminate_child("w")
        calls = factory.calls
        await trio.sleep(1)
        assert factory.calls == calls
        assert sup.is_alive


def test_backoff_delay_formula() -> None:
    backoff = Backoff(min=0.5, max=4, random_factor=0)
    assert [backoff.delay(n) for n in range(6)] == [0.5, 1, 2, 4, 4, 4]
    assert backoff.quiet_period == pytest.approx(2.25)
    jittered = Backoff(min=1, max=8, random_factor=0.5)
    rng = random.Random(7)
    for n in range(6):
        base = min(8, 2**n)
        assert base <= jittered.delay(n, rng) <= base * 1.5


async def _crash_and_time_restart(client: SupervisorClient, sub: Subscription) -> float:
    """Crash w; the virtual time until it is up again (checked against the announced delay)."""
    await crash(client, "w", sync=False)
    start = trio.current_time()
    announced = (await next_event(sub, ChildRestartingEvent, child_id="w")).delay
    await next_event(sub, ChildStarted, child_id="w")
    elapsed = trio.current_time() - start
    assert elapsed == pytest.approx(announced)
    return elapsed


async def test_backoff_delays_double_and_reset_after_quiet_period(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    backoff = Backoff(min=1, max=8, random_factor=0)  # quiet period (1 + 8) / 2 = 4.5 s
    _, client = await start_sup(system, [spec("w")], intensity=100, period=1000, backoff=backoff)
    with trio.fail_after(100), system.events.subscribe(1000) as sub:
        delays = [await _crash_and_time_restart(client, sub) for _ in range(3)]
        assert delays == pytest.approx([1, 2, 4])
        await trio.sleep(5)  # quiet: no failure for longer than 4.5 s
        assert await _crash_and_time_restart(client, sub) == pytest.approx(1)
        assert await _crash_and_time_restart(client, sub) == pytest.approx(2)


async def test_backoff_keeps_state_responsive_and_stashes_during_delay(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(100):
        _, client = await start_sup(
            system, [spec("w"), spec("x")], backoff=Backoff(min=3, max=3, random_factor=0)
        )
        await crash(client, "w")
        await trio.sleep(2.9)
        assert await states(client) == {"w": "restarting", "x": "running"}
        await trio.sleep(0.2)
        assert await states(client) == {"w": "running", "x": "running"}


async def test_backoff_saturates_at_max_for_a_child_that_keeps_crashing(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    backoff = Backoff(min=1, max=8, random_factor=0)
    _, client = await start_sup(system, [spec("w")], intensity=100, period=1000, backoff=backoff)
    with trio.fail_after(200), system.events.subscribe(1000) as sub:
        delays = [await _crash_and_time_restart(client, sub) for _ in range(6)]
    assert delays == pytest.approx([1, 2, 4, 8, 8, 8])
