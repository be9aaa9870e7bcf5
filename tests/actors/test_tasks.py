"""Owned tasks (``ctx.start_task``): run as the actor, end with it, crash it on failure."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import trio
import trio.testing

from actors import (
    Actor,
    ActorSystem,
    Exit,
    ExitKind,
    ExitReason,
    NotRunning,
    OwnedTask,
    TaskEnded,
    current_path,
    trio_task_count,
)


class Ticker(Actor):
    """Two owned tasks: one casts ticks to the actor itself, one waits forever."""

    def __init__(self) -> None:
        self.ticks: list[Any] = []
        self.paths: list[str | None] = []
        self.tasks: list[OwnedTask] = []
        self.done_at_stop: list[bool] = []
        self.stop_reason: ExitReason | None = None
        self.three = trio.Event()

    async def on_start(self) -> None:
        self.tasks.append(self.ctx.start_task(self._tick, name="tick"))
        self.tasks.append(self.ctx.start_task(trio.sleep_forever, name="idle"))

    async def _tick(self) -> None:
        self.paths.append(current_path())
        for n in range(3):
            await self.ctx.self.cast(("tick", n))
        await trio.sleep_forever()

    async def receive(self, message: Any) -> Any:
        if message == "ticks":
            return list(self.ticks)
        if message == "cancel-idle":
            self.tasks[1].cancel()
            await self.tasks[1].wait()
            return self.tasks[1].done
        self.ticks.append(message)
        if len(self.ticks) == 3:
            self.three.set()
        return None

    async def on_stop(self, reason: ExitReason) -> None:
        self.stop_reason = reason
        self.done_at_stop = [task.done for task in self.tasks]


async def _ticks(ref: Any, actor: Ticker) -> list[Any]:
    """The ticks the actor handled, once its task has sent all three."""
    with trio.fail_after(5):
        await actor.three.wait()
    ticks: list[Any] = await ref.call("ticks")
    return ticks


async def test_a_task_runs_as_its_actor_and_its_casts_arrive(system: ActorSystem) -> None:
    actor = Ticker()
    ref = await system.spawn(actor, name="ticker")
    assert await _ticks(ref, actor) == [("tick", 0), ("tick", 1), ("tick", 2)]
    assert actor.paths == ["/ticker"]
    await ref.stop()


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_tasks_end_before_on_stop_and_leave_no_task_behind(
    system: ActorSystem, how: str
) -> None:
    before = trio_task_count()
    actor = Ticker()
    ref = await system.spawn(actor, name="ticker")
    await _ticks(ref, actor)
    assert trio_task_count() == before + 3  # the actor and its two tasks
    reason = await (ref.stop() if how == "stop" else ref.kill())
    assert reason.kind is (ExitKind.SHUTDOWN if how == "stop" else ExitKind.CANCELLED)
    assert actor.done_at_stop == [True, True]
    await trio.testing.wait_all_tasks_blocked()
    assert trio_task_count() == before


class SlowToStop(Actor):
    """Takes a while to clean up, so a parent that does not wait for it would see it alive."""

    async def receive(self, message: Any) -> Any:
        return None

    async def on_stop(self, reason: ExitReason) -> None:
        await trio.sleep(0.05)


class Family(Ticker):
    """A ticker with two children: its stop hook sees what is left of both."""

    def __init__(self) -> None:
        super().__init__()
        self.children_at_stop: list[str] | None = None
        self.kids_alive_at_stop: list[bool] | None = None
        self.kids: list[Any] = []

    async def on_start(self) -> None:
        await super().on_start()
        self.kids = [await self.ctx.spawn(SlowToStop(), name=f"kid-{i}") for i in range(2)]

    async def on_stop(self, reason: ExitReason) -> None:
        await super().on_stop(reason)
        self.children_at_stop = [ref.path for ref in self.ctx.children()]
        self.kids_alive_at_stop = [kid.is_alive for kid in self.kids]


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_tasks_and_children_are_gone_before_on_stop(system: ActorSystem, how: str) -> None:
    before = trio_task_count()
    actor = Family()
    ref = await system.spawn(actor, name="family")
    await _ticks(ref, actor)
    reason = await (ref.stop() if how == "stop" else ref.kill())
    assert reason.kind is (ExitKind.SHUTDOWN if how == "stop" else ExitKind.CANCELLED)
    assert actor.done_at_stop == [True, True]
    assert actor.children_at_stop == []
    assert actor.kids_alive_at_stop == [False, False]
    kid_exits = [kid.exit_reason for kid in actor.kids]
    if how == "kill":  # cancelled by the parent, within its kill
        assert all(r is not None and r.kind is ExitKind.CANCELLED for r in kid_exits)
    else:
        assert all(r is not None and r.kind is ExitKind.SHUTDOWN for r in kid_exits)
    await trio.testing.wait_all_tasks_blocked()
    assert trio_task_count() == before


class Notified(Actor):
    """Starts tasks with ``notify=True`` on request and records the notices."""

    def __init__(self) -> None:
        self.ended: list[str] = []
        self.seen = trio.Event()
        self.tasks: dict[str, OwnedTask] = {}

    async def receive(self, message: Any) -> Any:
        if isinstance(message, TaskEnded):
            self.ended.append(message.task.name)
            self.seen.set()
        elif message == "quick":
            self.tasks["quick"] = self.ctx.start_task(
                trio.lowlevel.checkpoint, name="quick", notify=True
            )
        elif message == "forever":
            self.tasks["forever"] = self.ctx.start_task(
                trio.sleep_forever, name="forever", notify=True
            )
        elif message == "silent":
            self.tasks["silent"] = self.ctx.start_task(trio.lowlevel.checkpoint, name="silent")
        return None


async def _next_notice(actor: Notified) -> list[str]:
    with trio.fail_after(5):
        await actor.seen.wait()
    actor.seen = trio.Event()
    return list(actor.ended)


async def test_a_notifying_task_tells_its_actor_when_it_returns_or_is_cancelled(
    system: ActorSystem,
) -> None:
    actor = Notified()
    ref = await system.spawn(actor, name="notified")
    await ref.call("silent")  # no notice for a task started without notify
    await ref.call("quick")
    assert await _next_notice(actor) == ["quick"]
    await ref.call("forever")
    actor.tasks["forever"].cancel()
    assert await _next_notice(actor) == ["quick", "forever"]
    assert actor.tasks["silent"].done
    await ref.stop()


class NotifiedAtStart(Notified):
    """Its notifying task ends while ``on_start`` is still running."""

    async def on_start(self) -> None:
        self.tasks["early"] = self.ctx.start_task(
            trio.lowlevel.checkpoint, name="early", notify=True
        )
        await self.tasks["early"].wait()


async def test_a_task_that_ends_while_its_actor_starts_is_still_reported(
    system: ActorSystem,
) -> None:
    actor = NotifiedAtStart()
    ref = await system.spawn(actor, name="early")
    assert await _next_notice(actor) == ["early"]
    await ref.stop()


async def test_cancelling_one_task_leaves_the_actor_running(system: ActorSystem) -> None:
    actor = Ticker()
    ref = await system.spawn(actor, name="ticker")
    assert await ref.call("cancel-idle") is True
    assert actor.tasks[0].done is False
    assert await _ticks(ref, actor)
    await ref.stop()


class Failing(Actor):
    """Its task raises once it is told to."""

    def __init__(self) -> None:
        self.go = trio.Event()

    async def on_start(self) -> None:
        self.ctx.start_task(self._work, name="worker")

    async def _work(self) -> None:
        await self.go.wait()
        raise ValueError("the pipe broke")

    async def receive(self, message: Any) -> Any:
        self.go.set()
        return None


class Trapper(Actor):
    trap_exits = True

    def __init__(self) -> None:
        self.exits: list[Exit] = []
        self.got = trio.Event()
        self.child: Failing | None = None

    async def on_start(self) -> None:
        self.child = Failing()
        await self.ctx.spawn(self.child, name="failing")

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Exit):
            self.exits.append(message)
            self.got.set()
        return None


async def test_a_task_that_raises_crashes_its_actor_naming_the_task(
    system: ActorSystem,
) -> None:
    trapper = Trapper()
    ref = await system.spawn(trapper, name="trapper")
    child = system.lookup("/trapper/failing")
    assert child is not None
    await child.cast("go")
    reason = await child.wait_exited()
    assert reason.kind is ExitKind.ERROR
    assert "ValueError: the pipe broke" in reason.describe()
    assert "/trapper/failing in task worker" in reason.describe()
    with trio.fail_after(5):
        await trapper.got.wait()
    assert trapper.exits[0].reason is reason
    await ref.stop()


class StartsTaskWhileStopping(Actor):
    def __init__(self) -> None:
        self.error: BaseException | None = None

    async def on_stop(self, reason: ExitReason) -> None:
        try:
            self.ctx.start_task(trio.sleep_forever, name="late")
        except NotRunning as exc:
            self.error = exc


async def test_a_stopping_actor_cannot_start_a_task(system: ActorSystem) -> None:
    actor = StartsTaskWhileStopping()
    ref = await system.spawn(actor, name="late")
    await ref.stop()
    assert isinstance(actor.error, NotRunning)
    assert "cannot start a task" in str(actor.error)


class Stubborn(Actor):
    """Its task ignores cancellation until ``release`` is set."""

    shutdown_budget = 0.2

    def __init__(self, release: trio.Event) -> None:
        self.release = release
        self.stopped = False

    async def on_start(self) -> None:
        self.ctx.start_task(self._shielded, name="stubborn")

    async def _shielded(self) -> None:
        with trio.CancelScope(shield=True):
            await self.release.wait()

    async def receive(self, message: Any) -> Any:
        self.ctx.stop()  # a stop with no deadline but the actor's own budget
        return None

    async def on_stop(self, reason: ExitReason) -> None:
        self.stopped = True


@pytest.mark.parametrize("how", ["stop", "self-stop", "kill"])
async def test_a_task_ignoring_cancellation_does_not_hold_its_actor(
    system: ActorSystem, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    release = trio.Event()
    actor = Stubborn(release)
    ref = await system.spawn(actor, name="stubborn")
    start = trio.current_time()
    try:
        with caplog.at_level(logging.ERROR, logger="actors"), trio.fail_after(5):
            if how == "stop":
                reason = await ref.stop()
            elif how == "kill":
                reason = await ref.kill()
            else:
                await ref.cast("stop yourself")
                reason = await ref.wait_exited()
    finally:
        release.set()  # let the task end, so the system can close whatever happened
    # Its budget (0.2 s) or the kill grace (1 s), never the task's end.
    assert trio.current_time() - start < 1.5
    assert actor.stopped
    # Waiting for the task used up the stop's budget, so its stopper may have killed it
    # by then (as when a stop hook overruns).
    expected = {
        "stop": {ExitKind.SHUTDOWN, ExitKind.KILLED},
        "self-stop": {ExitKind.NORMAL},
        "kill": {ExitKind.CANCELLED},
    }
    assert reason.kind in expected[how]
    assert "task(s) stubborn did not end when cancelled" in caplog.text
