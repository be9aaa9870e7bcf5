"""Ordered start and stop: start failures, IGNORE, and each shutdown setting."""

from __future__ import annotations

import pytest
import trio
from trio.testing import MockClock

from actors import (
    ActorExitedEvent,
    ActorSystem,
    ExitKind,
    StartFailed,
    UnkillableReported,
)
from supervisors import (
    BRUTAL,
    INFINITY,
    ChildExited,
    ChildNotFound,
    ChildSpec,
    ChildStartFailed,
    ChildType,
    Restart,
    Supervisor,
)

from .helpers import Log, Worker, ignore_factory, of_type, ref_of, spec, start_sup, starts, stops


async def test_children_start_one_by_one_in_spec_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    slow = {"start_delay": 1.0}
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec(c, log, slow) for c in "abc"])
        # Each start took 1 s and they ran one after the other: spawn returned after all three.
        assert trio.current_time() == pytest.approx(3.0)
        assert starts(log) == ["a", "b", "c"]
        assert [(c.id, c.state) for c in await client.which_children()] == [
            ("a", "running"),
            ("b", "running"),
            ("c", "running"),
        ]


async def test_failed_child_start_fails_supervisor_start_and_stops_started_in_reverse(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    specs = [spec("a", log), spec("b", log), spec("c", log, {"fail_start": True}), spec("d", log)]
    with trio.fail_after(10):
        with pytest.raises(StartFailed) as info:
            await system.spawn(Supervisor(specs), name="sup")
    reason = info.value.reason
    assert info.value.path == "/sup"
    assert reason.kind is ExitKind.ERROR
    error = reason.error
    assert isinstance(error, ChildStartFailed)
    assert error.child_id == "c"
    assert "'c'" in str(error)
    assert error.reason.kind is ExitKind.ERROR
    assert isinstance(error.reason.error, RuntimeError)
    assert str(error.reason.error) == "c failed to start"
    assert starts(log) == ["a", "b", "c"]  # d was never started
    assert [s for s in stops(log) if s[0] != "c"] == [
        ("b", ExitKind.SHUTDOWN),
        ("a", ExitKind.SHUTDOWN),
    ]
    assert system.lookup("/sup") is None


async def test_raising_start_factory_fails_supervisor_start_naming_child(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    def broken() -> Worker:
        raise ValueError("no config")

    log: Log = []
    with trio.fail_after(10), pytest.raises(StartFailed) as info:
        await system.spawn(Supervisor([spec("a", log), ChildSpec("b", broken)]), name="sup")
    error = info.value.reason.error
    assert isinstance(error, ChildStartFailed)
    assert error.child_id == "b"
    assert isinstance(error.reason.error, ValueError)
    assert "start factory" in error.reason.detail
    assert stops(log) == [("a", ExitKind.SHUTDOWN)]


async def test_start_factory_returning_a_non_actor_fails_start(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10), pytest.raises(StartFailed) as info:
        await system.spawn(Supervisor([ChildSpec("x", lambda: 42)]), name="sup")
    error = info.value.reason.error
    assert isinstance(error, ChildStartFailed)
    assert error.child_id == "x"
    assert error.reason.kind is ExitKind.ERROR
    assert "returned 42, not an Actor" in error.reason.detail


async def test_ignore_starts_nothing_and_keeps_spec_unless_temporary(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    specs = [
        ChildSpec("kept", ignore_factory),
        ChildSpec("gone", ignore_factory, restart=Restart.TEMPORARY),
        spec("b", log),
    ]
    with trio.fail_after(10):
        _, client = await start_sup(system, specs)
        rows = await client.which_children()
        assert [(c.id, c.state, c.ref) for c in rows[:1]] == [("kept", "stopped", None)]
        assert [c.id for c in rows] == ["kept", "b"]
        assert (await client.get_childspec("kept")).id == "kept"
        with pytest.raises(ChildNotFound):
            await client.get_childspec("gone")
        assert starts(log) == ["b"]
        counts = await client.count_children()
        assert (counts.specs, counts.active) == (2, 1)


async def test_stop_goes_in_reverse_start_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, _ = await start_sup(system, [spec(c, log) for c in "abcd"])
        reason = await sup.stop()
    assert reason.kind is ExitKind.SHUTDOWN
    assert stops(log) == [(c, ExitKind.SHUTDOWN) for c in "dcba"]


async def test_brutal_child_busy_in_a_handler_is_killed_at_once(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, client = await start_sup(system, [spec("a", log, shutdown=BRUTAL)])
        ref = await ref_of(client, "a")
        await ref.cast(("sleep", 100))
        await trio.sleep(1)
        start = trio.current_time()
        await sup.stop()
        assert trio.current_time() - start < 0.01
    assert ref.exit_reason is not None
    assert ref.exit_reason.kind is ExitKind.KILLED


async def test_brutal_idle_child_is_killed_not_shut_down(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    kinds: list[ExitKind] = []
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("a", shutdown=BRUTAL)])
        for _ in range(20):  # the outcome has depended on the scheduling order
            ref = await ref_of(client, "a")
            await client.terminate_child("a")
            assert ref.exit_reason is not None
            kinds.append(ref.exit_reason.kind)
            await client.restart_child("a")
    assert kinds == [ExitKind.KILLED] * 20


async def test_timeout_shutdown_child_stopping_in_time_exits_shutdown(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, client = await start_sup(system, [spec("a", log, {"stop_delay": 1.5}, shutdown=2)])
        ref = await ref_of(client, "a")
        start = trio.current_time()
        await sup.stop()
        assert trio.current_time() - start == pytest.approx(1.5)
    assert ref.exit_reason is not None
    assert ref.exit_reason.kind is ExitKind.SHUTDOWN


async def test_child_hanging_in_cleanup_is_killed_at_its_shutdown_deadline(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, client = await start_sup(system, [spec("a", log, {"stop_delay": 60}, shutdown=2)])
        ref = await ref_of(client, "a")
        start = trio.current_time()
        reason = await sup.stop()
        assert trio.current_time() - start == pytest.approx(2.0)
    assert reason.kind is ExitKind.SHUTDOWN
    assert ref.exit_reason is not None
    assert ref.exit_reason.kind is ExitKind.KILLED
    assert stops(log) == [("a", ExitKind.SHUTDOWN)]  # the hook started, then was cut off


async def test_timeout_child_busy_in_handler_is_killed_at_its_deadline(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        sup, client = await start_sup(system, [spec("a", shutdown=3)])
        ref = await ref_of(client, "a")
        await ref.cast(("sleep", 100))
        start = trio.current_time()
        await sup.stop()
        assert trio.current_time() - start == pytest.approx(3.0)
    assert ref.exit_reason is not None
    assert ref.exit_reason.kind is ExitKind.KILLED


async def test_infinity_shutdown_waits_for_the_child(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(1000):
        sup, client = await start_sup(
            system, [spec("a", log, {"stop_delay": 500}, shutdown=INFINITY)]
        )
        ref = await ref_of(client, "a")
        start = trio.current_time()
        await sup.stop()
        assert trio.current_time() - start == pytest.approx(500)
    assert ref.exit_reason is not None
    assert ref.exit_reason.kind is ExitKind.SHUTDOWN


async def test_each_child_is_stopped_per_its_own_shutdown_in_reverse_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    specs = [
        spec("a", log, {"stop_delay": 1}, shutdown=5),
        spec("b", log, {"stop_delay": 60}, shutdown=2),
        spec("c", log, {"stop_delay": 3}, shutdown=INFINITY),
    ]
    with trio.fail_after(100), system.events.subscribe(1000) as sub:
        sup, _ = await start_sup(system, specs)
        start = trio.current_time()
        await sup.stop()
        assert trio.current_time() - start == pytest.approx(3 + 2 + 1)  # one after the other
    exits = {
        e.path: e.reason.kind for e in of_type(sub.drain(), ActorExitedEvent) if e.path != "/sup"
    }
    assert exits == {
        "/sup/c": ExitKind.SHUTDOWN,
        "/sup/b": ExitKind.KILLED,
        "/sup/a": ExitKind.SHUTDOWN,
    }
    assert [s[0] for s in stops(log)] == ["c", "b", "a"]


async def test_unkillable_child_is_reported_and_supervisor_stops_on_time(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(100), system.events.subscribe(1000) as sub:
        sup, client = await start_sup(system, [spec("a", log), spec("b", log, shutdown=2)])
        stuck = await ref_of(client, "b")
        await stuck.cast(("shielded", 50))
        await trio.sleep(1)
        start = trio.current_time()
        reason = await sup.stop()
        # 2 s graceful, then cancelled, then about the system's kill grace (1 s): reported,
        # and the supervisor moved on.
        assert 3.0 <= trio.current_time() - start <= 3.2
        assert reason.kind is ExitKind.SHUTDOWN
        assert stuck.is_alive
        assert system.unkillable() == [stuck]
        reports = of_type(sub.drain(), UnkillableReported)
        assert [r.path for r in reports] == ["/sup/b"]
        assert stops(log) == [("a", ExitKind.SHUTDOWN)]  # a was still stopped after b


async def test_terminate_child_reports_an_unkillable_child(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(100), system.events.subscribe(1000) as sub:
        _, client = await start_sup(system, [spec("a", shutdown=2)])
        stuck = await ref_of(client, "a")
        await stuck.cast(("shielded", 50))
        await trio.sleep(1)
        start = trio.current_time()
        await client.terminate_child("a")
        assert 3.0 <= trio.current_time() - start <= 3.2
        exited = of_type(sub.drain(), ChildExited)
        assert [(e.child_id, e.reason.kind) for e in exited] == [("a", ExitKind.UNKILLABLE)]
        assert (await client.which_children())[0].state == "stopped"


async def test_nested_supervisors_stop_depth_first_in_reverse_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []

    def inner() -> Supervisor:
        return Supervisor([spec("x", log), spec("y", log)])

    specs = [spec("a", log), ChildSpec("inner", inner, type=ChildType.SUPERVISOR), spec("b", log)]
    with trio.fail_after(10):
        sup, _ = await start_sup(system, specs)
        assert starts(log) == ["a", "x", "y", "b"]
        await sup.stop()
    assert stops(log) == [(c, ExitKind.SHUTDOWN) for c in "byxa"]


async def test_terminate_child_reports_a_child_hanging_in_cleanup_as_killed(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        _, client = await start_sup(system, [spec("a", None, {"stop_delay": 60}, shutdown=2)])
        start = trio.current_time()
        await client.terminate_child("a")
        assert trio.current_time() - start == pytest.approx(2.0)
        exited = of_type(sub.drain(), ChildExited)
    assert [(e.child_id, e.reason.kind) for e in exited] == [("a", ExitKind.KILLED)]
