"""DynamicSupervisor: template + extra args, max_children (reject / queue), concurrent stop."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import trio
from trio.testing import MockClock

from actors import ActorRef, ActorSystem, CallTimeout, ExitKind, NotRunning
from supervisors import (
    Admission,
    ChildNotFound,
    ChildSpec,
    DynamicSupervisor,
    Restart,
    SpecError,
    Supervisor,
    SupervisorClient,
    TooManyChildren,
)

from .helpers import Log, Worker, crash, spec, starts, states, stops, wait_until


async def start_dyn(
    system: ActorSystem, restart: Restart = Restart.PERMANENT, **options: Any
) -> tuple[DynamicSupervisor, ActorRef, SupervisorClient]:
    dyn = DynamicSupervisor(ChildSpec("w", Worker, restart=restart), **options)
    ref = await system.spawn(dyn, name="dyn")
    return dyn, ref, SupervisorClient(ref, timeout=1000)


async def test_children_get_template_args_plus_extra_args(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    template = ChildSpec("w", Worker, args=("w", log, "from-template"))
    with trio.fail_after(10):
        ref = await system.spawn(DynamicSupervisor(template), name="dyn")
        client = SupervisorClient(ref)
        first = await client.start_child(None, 1, 2)
        second = await client.start_child(None, 3, name="custom")
        assert first is not None and first.ref is not None
        assert second is not None and second.ref is not None
        assert await first.ref.call("extra") == ("from-template", 1, 2)
        assert await second.ref.call("extra") == ("from-template", 3)
        assert (first.ref.path, second.ref.path) == ("/dyn/w-1", "/dyn/custom")
        assert [c.id for c in await client.which_children()] == ["w-1", "custom"]
        with pytest.raises(SpecError, match="'custom' \\(already in use\\)"):
            await client.start_child(None, name="custom")
        with pytest.raises(SpecError, match="from its template"):
            await client.start_child(spec("x"))


async def test_terminate_child_by_handle_or_ref_forgets_it(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, _, client = await start_dyn(system)
        a = await client.start_child(None, "a", log)
        b = await client.start_child(None, "b", log)
        assert a is not None and b is not None and b.ref is not None
        await client.terminate_child(b.ref)
        await client.terminate_child(a)
        assert stops(log) == [("b", ExitKind.SHUTDOWN), ("a", ExitKind.SHUTDOWN)]
        assert await client.which_children() == []
        assert (await client.count_children()).active == 0
        await client.terminate_child(a)  # already gone: ok (idempotent)


async def test_permanent_child_is_restarted_under_the_same_name(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, _, client = await start_dyn(system)
        await client.start_child(None, "a")
        await crash(client, "w-1")
        [row] = await client.which_children()
        assert (row.id, row.state, row.restarts) == ("w-1", "running", 1)


@pytest.mark.parametrize(
    ("restart", "how"),
    [
        (Restart.TEMPORARY, "crash"),
        (Restart.TEMPORARY, "normal"),
        (Restart.TRANSIENT, "normal"),
        (Restart.TRANSIENT, "shutdown"),
    ],
)
async def test_children_that_stop_for_good_are_forgotten(
    system: ActorSystem, autojump_clock: MockClock, restart: Restart, how: str
) -> None:
    with trio.fail_after(10):
        _, _, client = await start_dyn(system, restart=restart)
        await client.start_child(None, "a")
        await client.start_child(None, "b")
        await crash(client, "w-1", how)
        assert await states(client) == {"w-2": "running"}


async def test_restart_child_is_not_supported(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, _, client = await start_dyn(system)
        await client.start_child(None, "a")
        with pytest.raises(SpecError, match="not supported by a dynamic supervisor"):
            await client.restart_child("w-1")
        with pytest.raises(ChildNotFound):
            await client.restart_child("nope")


async def test_max_children_reject_policy(system: ActorSystem, autojump_clock: MockClock) -> None:
    with trio.fail_after(10):
        _, _, client = await start_dyn(system, max_children=2)
        first = await client.start_child(None, "a")
        await client.start_child(None, "b")
        with pytest.raises(TooManyChildren, match="/dyn is at max_children=2") as info:
            await client.start_child(None, "c")
        assert info.value.limit == 2
        assert len(await client.which_children()) == 2
        await client.terminate_child(first)  # type: ignore[arg-type]
        assert await client.start_child(None, "c") is not None


async def test_max_children_queue_policy_starts_in_order_as_slots_free(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    started: list[tuple[str, float]] = []
    with trio.fail_after(100):
        dyn, _, client = await start_dyn(
            system,
            Restart.TRANSIENT,
            max_children=2,
            admission=Admission.QUEUE,
            queue_capacity=2,
        )
        first = await client.start_child(None, "a", log, name="a")
        await client.start_child(None, "b", log, name="b")

        async def start(name: str) -> None:
            handle = await client.start_child(None, name, log, name=name)
            assert handle is not None and handle.ref is not None
            started.append((handle.ref.name, trio.current_time()))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(start, "q1")
            await wait_until(lambda: dyn.queued == 1)
            nursery.start_soon(start, "q2")
            await wait_until(lambda: dyn.queued == 2)
            with pytest.raises(TooManyChildren, match="admission queue is full"):
                await client.start_child(None, "q3", log)
            await trio.sleep(5)
            assert started == []
            await client.terminate_child(first)  # type: ignore[arg-type]
            await wait_until(lambda: len(started) == 1)
            await trio.sleep(5)
            await crash(client, "b", "normal")  # an exit on its own frees a slot too
        assert [name for name, _ in started] == ["q1", "q2"]
        assert [t for _, t in started] == pytest.approx([5, 10], abs=0.01)
        assert starts(log) == ["a", "b", "q1", "q2"]
        assert dyn.queued == 0
        assert set(await states(client)) == {"q1", "q2"}


async def test_queued_start_whose_caller_gave_up_is_skipped(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(100):
        dyn, _, client = await start_dyn(system, max_children=1, admission=Admission.QUEUE)
        first = await client.start_child(None, "a", log)
        with pytest.raises(CallTimeout):
            await client.start_child(None, "late", log, timeout=1)
        assert dyn.queued == 1
        await client.terminate_child(first)  # type: ignore[arg-type]
        assert dyn.queued == 0
        assert await client.which_children() == []
        assert starts(log) == ["a"]


async def test_queued_callers_are_told_when_the_supervisor_stops(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    errors: list[BaseException] = []
    with trio.fail_after(100):
        dyn, ref, client = await start_dyn(system, max_children=1, admission=Admission.QUEUE)
        await client.start_child(None, "a")

        async def start() -> None:
            try:
                await client.start_child(None, "b")
            except NotRunning as exc:
                errors.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(start)
            await wait_until(lambda: dyn.queued == 1)
            await ref.stop()
    assert len(errors) == 1
    assert "is stopping" in str(errors[0])


async def test_children_are_stopped_concurrently(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    template = ChildSpec("w", functools.partial(Worker, stop_delay=1.0), shutdown=5)
    with trio.fail_after(100):
        dyn = await system.spawn(DynamicSupervisor(template), name="dyn")
        client = SupervisorClient(dyn)
        for i in range(10):
            await client.start_child(None, f"c{i}", log)
        start = trio.current_time()
        reason = await dyn.stop()
        assert trio.current_time() - start == pytest.approx(1.0)
    assert reason.kind is ExitKind.SHUTDOWN
    assert sorted(name for name, _ in stops(log)) == sorted(f"c{i}" for i in range(10))


async def test_static_supervisor_stops_one_by_one_for_contrast(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    specs = [spec(f"c{i}", None, {"stop_delay": 1.0}) for i in range(10)]
    with trio.fail_after(100):
        sup = await system.spawn(Supervisor(specs), name="sup")
        start = trio.current_time()
        await sup.stop()
        assert trio.current_time() - start == pytest.approx(10.0)
