"""Actor lifecycle: start, graceful and hard stops, crashes, stop budgets, and how a
parent and its children stop together (unkillable actors: test_unkillable.py)."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    Exit,
    ExitKind,
    ExitReason,
    NotRunning,
    StartFailed,
    Subscription,
)

# -- helpers --------------------------------------------------------------------------


async def next_event(sub: Subscription, kind: type) -> Any:
    """The next event of type ``kind`` on ``sub`` (other events are skipped)."""
    async for event in sub.receive:
        if isinstance(event, kind):
            return event
    raise AssertionError(f"event bus closed before a {kind.__name__} arrived")


def _explode_in_handler(message: object) -> None:
    raise ValueError(f"bad message {message!r}")


def _explode_in_on_start() -> None:
    raise RuntimeError("boom at start")


class Recorder(Actor):
    """Echoes calls, stops itself on "stop-self", records every on_stop reason."""

    def __init__(self, log: list[Any] | None = None, tag: str = "") -> None:
        self.stops: list[ExitReason] = []
        self.log = log
        self.tag = tag

    async def receive(self, message: Any) -> Any:
        if message == "stop-self":
            self.ctx.stop()
            return "stopping"
        return message

    async def on_stop(self, reason: ExitReason) -> None:
        self.stops.append(reason)
        if self.log is not None:
            self.log.append((self.tag, reason.kind))


class Crasher(Actor):
    """Raises from its handler on "boom"."""

    async def receive(self, message: Any) -> Any:
        if message == "boom":
            _explode_in_handler(message)
        return message


# -- start ----------------------------------------------------------------------------


class SlowStarter(Actor):
    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def on_start(self) -> None:
        self.log.append("start-begin")
        # Queued during on_start: must only be handled once on_start is done.
        await self.ctx.self.cast("queued-during-start")
        await trio.sleep(2)
        self.log.append("start-end")

    async def receive(self, message: Any) -> Any:
        self.log.append(message)
        return message


async def test_on_start_runs_before_first_message_and_spawn_waits_for_it(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    log: list[str] = []
    t0 = trio.current_time()
    ref = await system.spawn(SlowStarter(log), name="slow")
    assert trio.current_time() - t0 == pytest.approx(2.0)
    assert log[:2] == ["start-begin", "start-end"]
    assert await ref.call("first") == "first"
    assert log == ["start-begin", "start-end", "queued-during-start", "first"]


class BadStart(Actor):
    async def on_start(self) -> None:
        _explode_in_on_start()


async def test_on_start_raising_fails_spawn_and_releases_path_and_name(
    system: ActorSystem,
) -> None:
    with pytest.raises(StartFailed) as info:
        await system.spawn(BadStart(), name="bad", register="bad-name")
    err = info.value
    assert err.path == "/bad"
    assert err.reason.kind is ExitKind.ERROR
    assert isinstance(err.reason.error, RuntimeError)
    assert "/bad in on_start" in err.reason.detail
    assert err.reason.traceback is not None
    assert "_explode_in_on_start" in err.reason.traceback
    assert system.lookup("/bad") is None
    assert system.whereis("bad-name") is None
    assert system.top_level() == []
    # Both the path segment and the registered name can be reused at once.
    ref = await system.spawn(Recorder(), name="bad", register="bad-name")
    assert ref.path == "/bad"
    assert system.whereis("bad-name") == ref


class HangingStart(Actor):
    async def on_start(self) -> None:
        await trio.sleep_forever()


async def test_on_start_that_hangs_fails_after_start_timeout(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    t0 = trio.current_time()
    with pytest.raises(StartFailed) as info:
        await system.spawn(HangingStart(), name="hang", start_timeout=3)
    assert trio.current_time() - t0 == pytest.approx(3.0)
    assert info.value.reason.kind is ExitKind.KILLED
    assert "3s" in info.value.reason.detail
    assert system.lookup("/hang") is None
    assert system.top_level() == []


# -- stopping -------------------------------------------------------------------------


async def test_graceful_stop_is_shutdown_and_runs_on_stop_once(system: ActorSystem) -> None:
    actor = Recorder()
    ref = await system.spawn(actor)
    reason = await ref.stop()
    assert reason.kind is ExitKind.SHUTDOWN
    assert not ref.is_alive
    assert ref.exit_reason == reason
    assert actor.stops == [reason]
    # Stopping again only reports the reason; the hook does not run twice.
    assert await ref.stop() == reason
    assert len(actor.stops) == 1


class Busy(Actor):
    """Blocks on its first message until released, then records the rest."""

    def __init__(self) -> None:
        self.release = trio.Event()
        self.handled: list[Any] = []

    async def receive(self, message: Any) -> Any:
        if message == "block":
            await self.release.wait()
        self.handled.append(message)
        return None


class BusyServingQueued(Busy):
    serve_queued_on_stop = True


@pytest.mark.parametrize("serve_queued", [True, False])
async def test_a_graceful_stop_serves_what_was_queued_before_it_only_if_asked(
    system: ActorSystem, serve_queued: bool
) -> None:
    actor = BusyServingQueued() if serve_queued else Busy()
    ref = await system.spawn(actor)
    await ref.cast("block")
    await trio.testing.wait_all_tasks_blocked()
    for n in range(3):
        await ref.cast(n)  # queued behind the blocked message
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ref.stop)
        await trio.testing.wait_all_tasks_blocked()
        actor.release.set()
    assert ref.exit_reason is not None and ref.exit_reason.kind is ExitKind.SHUTDOWN
    if serve_queued:
        assert actor.handled == ["block", 0, 1, 2]  # in order, then the stop
    else:
        assert actor.handled == ["block"]


async def test_ctx_stop_is_normal(system: ActorSystem) -> None:
    actor = Recorder()
    ref = await system.spawn(actor)
    assert await ref.call("stop-self") == "stopping"
    reason = await ref.wait_exited()
    assert reason.kind is ExitKind.NORMAL
    assert not reason.is_abnormal
    assert [r.kind for r in actor.stops] == [ExitKind.NORMAL]


async def test_handler_crash_is_an_error_with_exception_path_and_traceback(
    system: ActorSystem,
) -> None:
    ref = await system.spawn(Crasher(), name="crasher")
    await ref.cast("boom")
    reason = await ref.wait_exited()
    assert reason.kind is ExitKind.ERROR
    assert reason.is_abnormal
    assert isinstance(reason.error, ValueError)
    assert str(reason.error) == "bad message 'boom'"
    assert "/crasher in receive(str)" in reason.detail
    assert reason.traceback is not None
    assert "_explode_in_handler" in reason.traceback
    assert "ValueError: bad message 'boom'" in reason.traceback


class Killer(Actor):
    async def receive(self, message: Any) -> Any:
        return await message.kill()


async def test_kill_is_cancelled_and_names_the_killer(system: ActorSystem) -> None:
    victim_actor = Recorder()
    victim = await system.spawn(victim_actor, name="victim")
    killer = await system.spawn(Killer(), name="killer")
    reason = await killer.call(victim)
    assert reason.kind is ExitKind.CANCELLED
    assert reason.by == "/killer"
    assert victim.exit_reason == reason
    assert victim_actor.stops == [reason]


async def test_kill_from_outside_any_actor_has_no_killer(system: ActorSystem) -> None:
    victim = await system.spawn(Recorder())
    reason = await victim.kill()
    assert reason.kind is ExitKind.CANCELLED
    assert reason.by is None


class SlowStopHook(Actor):
    """A stop hook that takes far longer than any budget."""

    shutdown_budget = 2.0

    def __init__(self) -> None:
        self.hook_started = trio.Event()
        self.hook_finished = False

    async def receive(self, message: Any) -> Any:
        return message

    async def on_stop(self, reason: ExitReason) -> None:
        self.hook_started.set()
        await trio.sleep(1000)
        self.hook_finished = True


@pytest.mark.parametrize(("timeout", "budget"), [(None, 2.0), (0.5, 0.5)])
async def test_stop_hook_overrunning_its_budget_is_killed_on_time(
    system: ActorSystem,
    autojump_clock: trio.testing.MockClock,
    timeout: float | None,
    budget: float,
) -> None:
    actor = SlowStopHook()
    ref = await system.spawn(actor)
    t0 = trio.current_time()
    reason = await ref.stop(timeout=timeout)
    assert trio.current_time() - t0 == pytest.approx(budget, abs=1e-6)
    assert reason.kind is ExitKind.KILLED
    assert actor.hook_started.is_set()
    assert not actor.hook_finished
    assert not ref.is_alive


async def test_kill_during_slow_stop_hook_is_prompt(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    actor = SlowStopHook()
    ref = await system.spawn(actor, shutdown=60)
    stop_results: list[ExitReason] = []

    async def graceful_stop() -> None:
        stop_results.append(await ref.stop())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(graceful_stop)
        await actor.hook_started.wait()
        t0 = trio.current_time()
        reason = await ref.kill()
        kill_took = trio.current_time() - t0
    assert kill_took == pytest.approx(0.0, abs=1e-6)
    assert reason.kind is ExitKind.KILLED
    assert not actor.hook_finished
    assert stop_results == [reason]


# -- parents and children -------------------------------------------------------------


class Family(Actor):
    """Spawns Recorder children a, b, c (in that order) in on_start."""

    trap_exits = False

    def __init__(self, log: list[Any]) -> None:
        self.log = log
        self.kids: list[ActorRef] = []

    async def on_start(self) -> None:
        for tag in ("a", "b", "c"):
            self.kids.append(await self.ctx.spawn(Recorder(self.log, tag), name=tag))

    async def on_stop(self, reason: ExitReason) -> None:
        self.log.append(("parent", reason.kind))


async def test_children_stop_in_reverse_start_order_before_parent_on_stop(
    system: ActorSystem,
) -> None:
    log: list[Any] = []
    ref = await system.spawn(Family(log), name="family")
    reason = await ref.stop()
    assert reason.kind is ExitKind.SHUTDOWN
    assert log == [
        ("c", ExitKind.SHUTDOWN),
        ("b", ExitKind.SHUTDOWN),
        ("a", ExitKind.SHUTDOWN),
        ("parent", ExitKind.SHUTDOWN),
    ]


async def test_killing_a_parent_cancels_all_its_children(system: ActorSystem) -> None:
    log: list[Any] = []
    family = Family(log)
    ref = await system.spawn(family, name="family")
    reason = await ref.kill()
    assert reason.kind is ExitKind.CANCELLED
    assert [k.name for k in family.kids] == ["a", "b", "c"]
    for kid in family.kids:
        assert kid.exit_reason is not None
        assert kid.exit_reason.kind is ExitKind.CANCELLED
        assert kid.exit_reason.by == "/family"
    # Every child's stop hook saw the cancellation, and the parent's hook ran last.
    assert sorted(log[:3]) == [(t, ExitKind.CANCELLED) for t in ("a", "b", "c")]
    assert log[3:] == [("parent", ExitKind.CANCELLED)]


async def test_an_actor_tree_is_one_trio_task_per_actor(system: ActorSystem) -> None:
    """No task of its own for a parent's children: a tree of 4 actors is 4 tasks, all
    in the root nursery, so a parent's end never waits for a task of its own."""
    from actors import trio_task_count

    before = trio_task_count()
    family = Family([])
    ref = await system.spawn(family, name="family")
    assert trio_task_count() == before + 4
    await ref.kill()
    await trio.testing.wait_all_tasks_blocked()
    assert trio_task_count() == before


class SpawnsWhileStopping(Actor):
    def __init__(self) -> None:
        self.error: BaseException | None = None

    async def on_stop(self, reason: ExitReason) -> None:
        try:
            await self.ctx.spawn(Recorder())
        except NotRunning as exc:
            self.error = exc


async def test_stopping_actor_cannot_spawn_children(system: ActorSystem) -> None:
    actor = SpawnsWhileStopping()
    ref = await system.spawn(actor, name="stopping")
    await ref.stop()
    assert isinstance(actor.error, NotRunning)
    assert "/stopping is stopping" in str(actor.error)


class ParentOfCrasher(Actor):
    """Owns one Crasher child; records notices; can stop or kill that child."""

    def __init__(self, trap: bool = False) -> None:
        self.trap_exits = trap
        self.inbox: list[Any] = []

    async def on_start(self) -> None:
        self.child = await self.ctx.spawn(Crasher(), name="child")

    async def receive(self, message: Any) -> Any:
        if message == "inbox":
            return list(self.inbox)
        if message == "stop-child":
            return await self.child.stop()
        if message == "kill-child":
            return await self.child.kill()
        self.inbox.append(message)
        return None


async def test_child_crash_kills_non_trapping_parent_with_cause(system: ActorSystem) -> None:
    parent = ParentOfCrasher(trap=False)
    ref = await system.spawn(parent, name="parent")
    await parent.child.cast("boom")
    with trio.fail_after(5):
        reason = await ref.wait_exited()
    child_reason = parent.child.exit_reason
    assert child_reason is not None
    assert child_reason.kind is ExitKind.ERROR
    assert reason.kind is ExitKind.ERROR
    assert reason.cause is child_reason
    assert "/parent/child" in reason.detail


async def test_child_crash_is_an_exit_message_for_trapping_parent(system: ActorSystem) -> None:
    parent = ParentOfCrasher(trap=True)
    ref = await system.spawn(parent, name="parent")
    await parent.child.cast("boom")
    child_reason = await parent.child.wait_exited()
    inbox = await ref.call("inbox")
    assert inbox == [Exit(parent.child, child_reason)]
    assert inbox[0].reason.kind is ExitKind.ERROR
    assert ref.is_alive


@pytest.mark.parametrize("trap", [False, True])
async def test_child_stopped_by_its_parent_does_not_signal_the_parent(
    system: ActorSystem, autojump_clock: trio.testing.MockClock, trap: bool
) -> None:
    parent = ParentOfCrasher(trap=trap)
    ref = await system.spawn(parent, name="parent")
    reason = await ref.call("stop-child")
    assert reason.kind is ExitKind.SHUTDOWN
    await trio.sleep(1)
    assert ref.is_alive
    assert await ref.call("inbox") == []
    assert parent.ctx.children() == []


async def test_child_killed_by_its_parent_does_not_signal_the_parent(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    # docs/actors.md: a parent that stops its own child with ref.stop()/kill() unlinks
    # first, so that exit does not come back to it.
    parent = ParentOfCrasher(trap=False)
    ref = await system.spawn(parent, name="parent")
    reason = await ref.call("kill-child")
    assert reason.kind is ExitKind.CANCELLED
    await trio.sleep(1)
    assert ref.is_alive
