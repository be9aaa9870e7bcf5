"""OTP's rules on order, restart generations, giving up and admin edges (issue 21).

1. Stop order is the reverse of the spec order, whatever happened before.
2. A group restart is one generation: a failed start restarts the whole group.
3. A supervisor that gives up exits ``shutdown``; the failure is in its event.
5. Admin calls wait for their operation; ``terminate_child`` is idempotent;
   a dynamic child whose restart is ``IGNORE`` is removed; ``get_childspec``
   takes a ref; a dynamic supervisor counts one spec.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import pytest
import trio
from trio.testing import MockClock

from actors import ActorSystem, CallTimeout, ExitKind
from supervisors import (
    IGNORE,
    ChildNotFound,
    ChildSpec,
    ChildType,
    DynamicSupervisor,
    Escalated,
    Restart,
    Strategy,
    Supervisor,
    SupervisorClient,
    SupervisorFlags,
    gave_up,
)

from .helpers import Flaky, Log, Worker, crash, ref_of, spec, start_sup, states, stops

ERROR, SHUTDOWN = ExitKind.ERROR, ExitKind.SHUTDOWN


# -- 1. stop order is the reverse of the spec order ----------------------------------


async def test_a_restarted_child_keeps_its_place_in_the_stop_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(60):
        sup, client = await start_sup(system, [spec(c, log) for c in "abc"])
        await crash(client, "a")  # its replacement is now the newest actor
        del log[:]
        assert (await sup.stop()).kind is SHUTDOWN
    assert stops(log) == [("c", SHUTDOWN), ("b", SHUTDOWN), ("a", SHUTDOWN)]


async def test_terminate_and_restart_child_keep_the_spec_place(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(60):
        sup, client = await start_sup(system, [spec(c, log) for c in "abc"])
        await client.terminate_child("b")
        await client.restart_child("b")
        await client.start_child(spec("d", log))  # a dynamic addition goes last
        del log[:]
        await sup.stop()
    assert [cid for cid, _ in stops(log)] == ["d", "c", "b", "a"]


async def test_giving_up_after_restarts_stops_in_reverse_spec_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(60):
        sup, client = await start_sup(system, [spec(c, log) for c in "abcd"], intensity=1)
        await crash(client, "a")
        del log[:]
        await crash(client, "c", sync=False)  # the second restart in 5 s: it gives up
        await sup.wait_exited()
    assert stops(log) == [("c", ERROR), ("d", SHUTDOWN), ("b", SHUTDOWN), ("a", SHUTDOWN)]


@pytest.mark.parametrize("strategy", [Strategy.ONE_FOR_ALL, Strategy.REST_FOR_ONE])
async def test_group_restarts_stop_in_reverse_spec_order_after_restarts(
    system: ActorSystem, autojump_clock: MockClock, strategy: Strategy
) -> None:
    log: Log = []
    with trio.fail_after(60):
        _, client = await start_sup(
            system, [spec(c, log) for c in "abcd"], strategy=strategy, intensity=10
        )
        await client.terminate_child("c")
        await client.restart_child("c")  # c is the newest actor, third in the spec
        del log[:]
        await crash(client, "b")
    expected = [("b", ERROR), ("d", SHUTDOWN), ("c", SHUTDOWN)]
    if strategy is Strategy.ONE_FOR_ALL:
        expected.append(("a", SHUTDOWN))
    assert stops(log) == expected


async def test_nested_supervisor_restarted_once_stops_after_its_dependents(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    """A service supervisor that restarted is still torn down after the clients after it."""
    log: Log = []

    def service() -> Supervisor:
        return Supervisor([spec("db", log)], intensity=5)

    specs = [ChildSpec("service", service, type=ChildType.SUPERVISOR), spec("client", log)]
    with trio.fail_after(60):
        root, client = await start_sup(system, specs, name="root", intensity=5)
        await (await ref_of(client, "service")).kill()
        await client.count_children()
        assert await states(client) == {"service": "running", "client": "running"}
        del log[:]
        await root.stop()
    assert [cid for cid, _ in stops(log)] == ["client", "db"]


# -- 2. a group restart is one generation ---------------------------------------------


async def test_one_for_all_failed_start_restarts_the_whole_group(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    flaky = Flaky("b", log)
    specs = [spec("a", log), ChildSpec("b", flaky), spec("c", log)]
    with trio.fail_after(60):
        sup, client = await start_sup(system, specs, strategy=Strategy.ONE_FOR_ALL, intensity=5)
        a_before = await ref_of(client, "a")
        flaky.fail_next = 1
        del log[:]
        await crash(client, "c")
        await trio.sleep(1)
        assert await states(client) == dict.fromkeys("abc", "running")
    assert log == [
        ("stop", "c", ERROR),
        ("stop", "b", SHUTDOWN),
        ("stop", "a", SHUTDOWN),
        ("start", "a"),  # b fails to start: a, restarted in this generation, stops again
        ("stop", "a", SHUTDOWN),
        ("start", "a"),
        ("start", "b"),
        ("start", "c"),
    ]
    assert await ref_of(client, "a") != a_before
    assert sup.is_alive


async def test_rest_for_one_failed_start_restarts_its_group_only(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    flaky = Flaky("c", log)
    specs = [spec("a", log), spec("b", log), ChildSpec("c", flaky), spec("d", log)]
    with trio.fail_after(60):
        _, client = await start_sup(system, specs, strategy=Strategy.REST_FOR_ONE, intensity=5)
        a = await ref_of(client, "a")
        flaky.fail_next = 2
        del log[:]
        await crash(client, "b")
        await trio.sleep(1)
        assert await states(client) == dict.fromkeys("abcd", "running")
        assert await ref_of(client, "a") == a  # before the group: untouched
    assert log == [
        ("stop", "b", ERROR),
        ("stop", "d", SHUTDOWN),
        ("stop", "c", SHUTDOWN),
        ("start", "b"),
        ("stop", "b", SHUTDOWN),
        ("start", "b"),
        ("stop", "b", SHUTDOWN),
        ("start", "b"),
        ("start", "c"),
        ("start", "d"),
    ]


class _CrashesSoon(Worker):
    """A ``Worker`` that crashes 0.1 s after it starts, while ``left`` says so."""

    def __init__(self, name: str, log: Log, left: list[int]) -> None:
        super().__init__(name, log)
        self.left = left

    async def on_start(self) -> None:
        await super().on_start()
        if self.left[0] > 0:
            self.left[0] -= 1
            self.ctx.send_after(0.1, "crash")


async def test_a_member_that_exits_while_its_group_restarts_restarts_the_whole_group(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    left = [0]
    specs = [
        spec("a", log),
        spec("b", log),
        ChildSpec("c", functools.partial(_CrashesSoon, "c", log, left)),
        spec("d", log, worker={"start_delay": 1.0}),  # c crashes while d starts
    ]
    with trio.fail_after(60):
        _, client = await start_sup(system, specs, strategy=Strategy.REST_FOR_ONE, intensity=5)
        a = await ref_of(client, "a")
        left[0] = 1
        del log[:]
        await crash(client, "b")
        await trio.sleep(5)
        assert await states(client) == dict.fromkeys("abcd", "running")
        assert await ref_of(client, "a") == a
        rows = {c.id: c.restarts for c in await client.which_children()}
    assert log == [
        ("stop", "b", ERROR),
        ("stop", "d", SHUTDOWN),
        ("stop", "c", SHUTDOWN),
        ("start", "b"),
        ("start", "c"),
        ("start", "d"),  # c crashes meanwhile
        ("stop", "c", ERROR),
        ("stop", "d", SHUTDOWN),  # b, c, d were one generation: all stopped again
        ("stop", "b", SHUTDOWN),
        ("start", "b"),
        ("start", "c"),
        ("start", "d"),
    ]
    assert rows == {"a": 0, "b": 2, "c": 2, "d": 2}


@pytest.mark.parametrize("strategy", [Strategy.ONE_FOR_ALL, Strategy.REST_FOR_ONE])
async def test_every_generation_attempt_counts_toward_the_intensity(
    system: ActorSystem, autojump_clock: MockClock, strategy: Strategy
) -> None:
    log: Log = []
    flaky = Flaky("b", log)
    specs = [spec("a", log), ChildSpec("b", flaky), spec("c", log)]
    with trio.fail_after(60), system.events.subscribe(1000) as sub:
        sup, client = await start_sup(system, specs, strategy=strategy, intensity=3)
        flaky.fail_next = 100
        del log[:]
        await crash(client, "a", sync=False)
        reason = await sup.wait_exited()
        escalated = [e for e in sub.drain() if isinstance(e, Escalated)]
    # The crash plus three failed generations: the fourth count exceeds 3.
    assert flaky.calls == 1 + 3
    assert reason.kind is SHUTDOWN
    (event,) = escalated
    assert [cid for cid, _ in event.history] == ["a", "b", "b", "b"]
    # Each generation started a again and stopped it when b failed; a stopped four times.
    assert log.count(("start", "a")) == 3
    assert sum(1 for e in log if e[:2] == ("stop", "a")) == 4
    assert ("start", "c") not in log


# -- 3. giving up exits shutdown ------------------------------------------------------


async def test_giving_up_exits_shutdown_and_the_failure_is_in_the_event(
    system: ActorSystem, autojump_clock: MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="supervisors")
    with trio.fail_after(60), system.events.subscribe(1000) as sub:
        sup, client = await start_sup(system, [spec("a"), spec("b")], intensity=1, period=5)
        await crash(client, "b")
        await crash(client, "b", sync=False)
        reason = await sup.wait_exited()
        escalated = [e for e in sub.drain() if isinstance(e, Escalated)]
    assert reason.kind is SHUTDOWN
    assert reason.error is None and reason.cause is None
    assert gave_up(reason)
    assert "b crashed" not in reason.describe()
    (event,) = escalated
    assert (event.supervisor, event.child_id, event.intensity, event.period) == ("/sup", "b", 1, 5)
    assert event.reason.kind is ERROR and str(event.reason.error) == "b crashed"
    records = [r for r in caplog.records if r.name == "supervisors" and "Escalated" in r.message]
    assert len(records) == 1 and "b crashed" in records[0].getMessage()


@pytest.mark.parametrize("restart", [Restart.TRANSIENT, Restart.TEMPORARY])
async def test_a_parent_leaves_a_transient_or_temporary_supervisor_down_after_it_gives_up(
    system: ActorSystem, autojump_clock: MockClock, restart: Restart
) -> None:
    def inner() -> Supervisor:
        return Supervisor([spec("w")], intensity=0)

    specs = [ChildSpec("inner", inner, type=ChildType.SUPERVISOR, restart=restart), spec("x")]
    with trio.fail_after(60):
        root, client = await start_sup(system, specs, name="root", intensity=0)
        inner_ref = await ref_of(client, "inner")
        await crash(SupervisorClient(inner_ref), "w", sync=False)
        assert (await inner_ref.wait_exited()).kind is SHUTDOWN
        await client.count_children()
        rows = await states(client)
        assert root.is_alive  # intensity 0, yet nothing was restarted
    expected = (
        {"x": "running"} if restart is Restart.TEMPORARY else {"inner": "stopped", "x": "running"}
    )
    assert rows == expected


async def test_a_permanent_parent_restarts_a_supervisor_that_gave_up(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    def inner() -> Supervisor:
        return Supervisor([spec("w")], intensity=0)

    specs = [ChildSpec("inner", inner, type=ChildType.SUPERVISOR)]
    with trio.fail_after(60):
        _, client = await start_sup(system, specs, name="root", intensity=5)
        first = await ref_of(client, "inner")
        await crash(SupervisorClient(first), "w", sync=False)
        await first.wait_exited()
        await client.count_children()
        assert await ref_of(client, "inner") != first


async def test_default_intensity_is_otps_one_restart_in_five_seconds(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    flags = SupervisorFlags()
    assert (flags.intensity, flags.period) == (1, 5.0)
    with trio.fail_after(60):
        sup = await system.spawn(Supervisor([spec("a")]), name="sup")
        client = SupervisorClient(sup)
        await crash(client, "a")
        assert sup.is_alive
        await crash(client, "a", sync=False)
        assert (await sup.wait_exited()).kind is SHUTDOWN


async def test_dynamic_default_intensity_is_one_in_five_seconds(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    template = ChildSpec("w", Worker)
    with trio.fail_after(60):
        sup = await system.spawn(DynamicSupervisor(template), name="dyn")
        client = SupervisorClient(sup)
        handle = await client.start_child(None, "w1")
        assert handle is not None
        await crash(client, handle.id)
        await crash(client, handle.id, sync=False)
        assert (await sup.wait_exited()).kind is SHUTDOWN


# -- 5. admin edges ---------------------------------------------------------------------


async def test_admin_calls_wait_for_their_operation_by_default(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    """The system's call timeout is 5 s; stopping this child takes 8 s."""
    log: Log = []
    slow = spec("slow", log, worker={"stop_delay": 8.0}, shutdown=10.0)
    with trio.fail_after(60):
        sup = await system.spawn(Supervisor([spec("a", log), slow]), name="sup")
        client = SupervisorClient(sup)
        started = trio.current_time()
        await client.terminate_child("slow")
        assert trio.current_time() - started == pytest.approx(8.0)
        assert await states(client) == {"a": "running", "slow": "stopped"}
        handle = await client.restart_child("slow")
        assert handle is not None and handle.ref is not None
        with pytest.raises(CallTimeout):
            await client.terminate_child("slow", timeout=1.0)
        await handle.ref.wait_exited()  # the stop went on after the caller gave up
        assert await states(client) == {"a": "running", "slow": "stopped"}


async def test_terminate_child_is_idempotent_by_id_and_by_ref(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    specs = [spec("t", restart=Restart.TEMPORARY), spec("p")]
    with trio.fail_after(60):
        sup, client = await start_sup(system, specs)
        t = await ref_of(client, "t")
        p = await ref_of(client, "p")
        t_handle = await client.child("t")
        await client.terminate_child("t")
        await client.terminate_child("t")  # gone (temporary: forgotten), still ok
        await client.terminate_child(t)
        await client.terminate_child(t_handle)
        await client.terminate_child(p)
        await client.terminate_child(p)  # an old incarnation: already gone
        assert await states(client) == {"p": "stopped"}
        with pytest.raises(ChildNotFound):
            await client.terminate_child("never-was")
        with pytest.raises(ChildNotFound):
            await client.terminate_child(sup)  # alive, and not a child of this supervisor


async def test_dynamic_terminate_child_is_idempotent(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(60):
        sup = await system.spawn(DynamicSupervisor(ChildSpec("w", Worker)), name="dyn")
        client = SupervisorClient(sup)
        handle = await client.start_child(None, "w1")
        assert handle is not None and handle.ref is not None
        ref = handle.ref
        await client.terminate_child(handle)
        await client.terminate_child(handle)
        await client.terminate_child(ref)
        await client.terminate_child(handle.id)
        assert await client.which_children() == []


class _Once:
    """A start factory: a ``Worker`` the first time, ``IGNORE`` afterwards."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, name: str) -> Any:
        self.calls += 1
        return Worker(name) if self.calls == 1 else IGNORE


async def test_dynamic_child_whose_restart_is_ignore_is_removed(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    once = _Once()
    with trio.fail_after(60):
        sup = await system.spawn(
            DynamicSupervisor(ChildSpec("w", once), intensity=5, max_children=1), name="dyn"
        )
        client = SupervisorClient(sup)
        handle = await client.start_child(None, "w1", name="named")
        assert handle is not None
        await crash(client, "named")
        assert once.calls == 2
        assert await client.which_children() == []
        assert (await client.count_children()).active == 0
        with pytest.raises(ChildNotFound):
            await client.get_childspec("named")
        # The name is free again, and the slot under max_children too.
        once.calls = 0
        assert await client.start_child(None, "w2", name="named") is not None


async def test_get_childspec_accepts_a_ref_and_a_handle(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(60):
        _, client = await start_sup(system, [spec("a"), spec("b")])
        b = await client.child("b")
        assert b.ref is not None
        assert (await client.get_childspec(b.ref)).id == "b"
        assert (await client.get_childspec(b)).id == "b"
        dyn = await system.spawn(DynamicSupervisor(ChildSpec("w", Worker)), name="dyn")
        dclient = SupervisorClient(dyn)
        handle = await dclient.start_child(None, "w1")
        assert handle is not None and handle.ref is not None
        assert (await dclient.get_childspec(handle.ref)).args == ("w1",)


async def test_dynamic_count_children_reports_one_spec(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(60):
        dyn = await system.spawn(DynamicSupervisor(ChildSpec("w", Worker)), name="dyn")
        client = SupervisorClient(dyn)
        assert (await client.count_children()).specs == 1
        for n in range(3):
            await client.start_child(None, f"w{n}")
        counts = await client.count_children()
    assert (counts.specs, counts.active, counts.workers, counts.supervisors) == (1, 3, 3, 0)
