"""One-shot tasks (``spawn_task``): the body's return or raise is the exit, awaited as a value."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
import trio
from mypy import api as mypy_api
from trio.testing import MockClock

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    Down,
    Exit,
    ExitKind,
    ExitReason,
    Task,
    TaskCancelled,
    TaskFailed,
    TaskRef,
    current_path,
)

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ROOT / "tests" / "typing_checks" / "oneshot.py"


async def add(a: int, b: int) -> int:
    await trio.lowlevel.checkpoint()
    return a + b


async def explode(text: str) -> int:
    await trio.lowlevel.checkpoint()
    raise ValueError(text)


class Gate:
    """A body that says it started, then waits forever; ``finished`` says how it ended."""

    def __init__(self) -> None:
        self.started = trio.Event()
        self.cancelled = False
        self.path: str | None = None

    async def wait(self) -> int:
        self.path = current_path()
        self.started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            self.cancelled = True
            raise
        return 0  # pragma: no cover


class Owner(Actor):
    """Spawns tasks as its children and answers with what their ``result()`` gave."""

    trap_exits = True
    shutdown_budget = 2.0

    def __init__(self) -> None:
        self.exits: list[Exit] = []
        self.task: TaskRef[int] | None = None

    async def receive(self, message: Any) -> Any:
        match message:
            case Exit():
                self.exits.append(message)
            case ("add", a, b):
                task = await self.ctx.spawn_task(add, a, b, name="add")
                return await task.result()
            case ("spawn", fn, link):
                self.task = await self.ctx.spawn_task(fn, name="job", link=link)
                return self.task
            case "exits":
                return list(self.exits)
        return None


class Watcher(Actor):
    """Monitors what it is told to and keeps the ``Down`` notices."""

    def __init__(self) -> None:
        self.downs: list[Down] = []
        self.got = trio.Event()

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Down):
            self.downs.append(message)
            self.got.set()
        elif isinstance(message, ActorRef):
            self.ctx.monitor(message)
        return None


class Fanout(Task[list[int]]):
    """A task with a context of its own: runs one sub-task per number, sums their squares."""

    def __init__(self, numbers: list[int]) -> None:
        self.numbers = numbers

    async def run(self) -> list[int]:
        tasks = [
            await self.ctx.spawn_task(square, n, name=f"square-{i}")
            for i, n in enumerate(self.numbers)
        ]
        paths = [t.path for t in tasks]
        assert paths == [f"{self.ctx.path}/square-{i}" for i in range(len(tasks))]
        return [await t.result() for t in tasks]


async def square(n: int) -> int:
    await trio.lowlevel.checkpoint()
    return n * n


# -- values and crashes ----------------------------------------------------------------


async def test_a_returned_value_is_the_result_and_the_exit_is_normal(
    system: ActorSystem,
) -> None:
    with trio.fail_after(10):
        task = await system.spawn_task(add, 2, 3, name="add")
        assert isinstance(task, ActorRef) and task.path == "/add"
        assert await task.result() == 5
        assert task.done and not task.is_alive
        reason = task.exit_reason
        assert reason is not None and reason.kind is ExitKind.NORMAL
        assert await task.result() == 5  # the value stays readable
        assert system.lookup("/add") is None


async def test_a_raise_is_a_crash_exit_carrying_the_exception(system: ActorSystem) -> None:
    with trio.fail_after(10):
        task = await system.spawn_task(explode, "bad input 42", name="boom")
        with pytest.raises(TaskFailed) as caught:
            await task.result()
    failed = caught.value
    assert isinstance(failed.error, ValueError) and str(failed.error) == "bad input 42"
    assert failed.__cause__ is failed.error
    assert failed.reason.kind is ExitKind.ERROR and failed.reason.error is failed.error
    assert failed.path == "/boom" and "/boom in receive(RunTask)" in failed.reason.detail
    assert "crashed" in str(failed) and "bad input 42" in str(failed)
    assert failed.reason.traceback is not None and "in explode" in failed.reason.traceback
    assert task.exit_reason == failed.reason


async def test_a_task_class_has_a_context_and_runs_sub_tasks(system: ActorSystem) -> None:
    with trio.fail_after(10):
        task = await system.spawn_task(Fanout([1, 2, 3]), name="fanout")
        assert await task.result() == [1, 4, 9]
    reason = task.exit_reason
    assert reason is not None and reason.kind is ExitKind.NORMAL


class Prepared(Task[list[str]]):
    """A task with a start hook: it runs before the body, and spawn waits for it."""

    def __init__(self) -> None:
        self.log: list[str] = []

    async def on_start(self) -> None:
        await trio.lowlevel.checkpoint()
        self.log.append("on_start")

    async def run(self) -> list[str]:
        self.log.append("run")
        return list(self.log)


async def test_a_tasks_on_start_runs_before_its_body(system: ActorSystem) -> None:
    with trio.fail_after(10):
        task = await system.spawn_task(Prepared(), name="prepared")
        assert await task.result() == ["on_start", "run"]


async def test_an_actor_awaits_its_tasks_result_as_a_value(system: ActorSystem) -> None:
    owner = await system.spawn(Owner(), name="owner")
    with trio.fail_after(10):
        assert await owner.call(("add", 20, 22)) == 42
        (exit_,) = await owner.call("exits")  # trapped: even a normal exit is an Exit (OTP)
    assert exit_.actor.path == "/owner/add" and exit_.reason.kind is ExitKind.NORMAL
    await owner.stop()


# -- stopping, killing and monitoring ----------------------------------------------------


@pytest.mark.parametrize(
    ("how", "kind"), [("kill", ExitKind.CANCELLED), ("stop", ExitKind.SHUTDOWN)]
)
async def test_a_kill_or_stop_mid_run_cancels_the_body_and_result_says_so(
    system: ActorSystem, how: str, kind: ExitKind
) -> None:
    gate = Gate()
    with trio.fail_after(10):
        task = await system.spawn_task(gate.wait, name="gate")
        await gate.started.wait()
        assert gate.path == "/gate"  # the body runs as the task's actor
        reason = await (task.kill() if how == "kill" else task.stop())
        assert reason.kind is kind and gate.cancelled
        with pytest.raises(TaskCancelled) as caught:
            await task.result()
    assert caught.value.reason == reason and caught.value.path == "/gate"
    assert not isinstance(caught.value, TaskFailed)


class Settling(Task[str]):
    """Waits; when killed, settles in a shielded step and returns why it was killed."""

    def __init__(self) -> None:
        self.started = trio.Event()

    async def run(self) -> str:
        assert self.ctx.kill_reason is None
        self.started.set()
        with contextlib.suppress(trio.Cancelled):  # level-triggered: it goes on after
            await trio.sleep_forever()
        with trio.CancelScope(shield=True):
            await trio.lowlevel.checkpoint()
        kill = self.ctx.kill_reason
        assert kill is not None
        return f"settled: {kill.detail}"


async def test_a_killed_task_reads_the_kills_reason_and_a_value_it_returns_stands(
    system: ActorSystem,
) -> None:
    body = Settling()
    with trio.fail_after(10):
        task = await system.spawn_task(body, name="settling")
        await body.started.wait()
        reason = await task.kill(ExitReason.cancelled(by="/owner", detail="replaced"))
        assert reason.kind is ExitKind.CANCELLED and reason.detail == "replaced"
        assert await task.result() == "settled: replaced"


async def test_a_body_that_ignores_its_kill_makes_the_task_unkillable(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    started = trio.Event()
    finished = trio.Event()

    async def stubborn() -> int:
        started.set()
        with trio.CancelScope(shield=True):
            await trio.sleep(10)  # past the kill grace (1 s)
        finished.set()
        return 1

    with trio.fail_after(60):
        task = await system.spawn_task(stubborn, name="stubborn")
        await started.wait()
        reason = await task.kill()
        # Reported, not left behind: the body is the task's own work, still running.
        assert reason.kind is ExitKind.UNKILLABLE and task.is_alive
        assert task in system.unkillable() and not finished.is_set()
        # It returned before another checkpoint: the value stands; the exit is the kill's.
        assert await task.result() == 1
    assert finished.is_set()
    reason = task.exit_reason
    assert reason is not None and reason.kind is ExitKind.CANCELLED


@pytest.mark.parametrize(("body", "kind"), [("add", ExitKind.NORMAL), ("raise", ExitKind.ERROR)])
async def test_a_monitor_gets_down_with_the_tasks_exit_reason(
    system: ActorSystem, body: str, kind: ExitKind
) -> None:
    watcher = Watcher()
    wref = await system.spawn(watcher, name="watcher")
    go = trio.Event()

    async def job() -> int:
        await go.wait()
        return await (add(1, 1) if body == "add" else explode("no"))

    with trio.fail_after(10):
        task = await system.spawn_task(job, name="job")
        await wref.cast(task)
        await wref.call("sync")  # the monitor is in place
        go.set()
        await watcher.got.wait()
    (down,) = watcher.downs
    assert down.actor == task and down.reason.kind is kind
    assert down.reason == task.exit_reason
    if kind is ExitKind.ERROR:
        assert isinstance(down.reason.error, ValueError)


async def test_its_owner_stopping_cancels_the_task(system: ActorSystem) -> None:
    gate = Gate()
    owner = await system.spawn(Owner(), name="owner")
    with trio.fail_after(10):
        task = await owner.call(("spawn", gate.wait, True))
        assert isinstance(task, TaskRef) and task.path == "/owner/job"
        await gate.started.wait()
        await owner.stop()
        assert gate.cancelled and not task.is_alive
        with pytest.raises(TaskCancelled) as caught:
            await task.result()
    assert caught.value.reason.kind is ExitKind.SHUTDOWN


async def test_a_crashed_task_signals_its_owner_over_the_link_unless_unlinked(
    system: ActorSystem,
) -> None:
    owner = await system.spawn(Owner(), name="owner")
    with trio.fail_after(10):
        linked = await owner.call(("spawn", lambda: explode("linked"), True))
        with pytest.raises(TaskFailed):
            await linked.result()
        unlinked = await owner.call(("spawn", lambda: explode("unlinked"), False))
        with pytest.raises(TaskFailed):
            await unlinked.result()
        exits = await owner.call("exits")
    assert [e.actor for e in exits] == [linked]
    assert exits[0].reason.kind is ExitKind.ERROR
    await owner.stop()


async def test_a_crashed_task_takes_down_an_owner_that_does_not_trap_exits(
    system: ActorSystem,
) -> None:
    class Plain(Actor):
        async def receive(self, message: Any) -> Any:
            await self.ctx.spawn_task(explode, "down with me", name="job")

    with trio.fail_after(10):
        ref = await system.spawn(Plain(), name="plain")
        await ref.cast("go")
        reason = await ref.wait_exited()
    assert reason.kind is ExitKind.ERROR and "down with me" in reason.detail


# -- bad input --------------------------------------------------------------------------


async def test_spawn_task_refuses_what_is_not_a_task_or_function(system: ActorSystem) -> None:
    with pytest.raises(TypeError, match="takes no arguments"):
        await system.spawn_task(Fanout([1]), 5)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="a Task instance or an async function"):
        await system.spawn_task(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a Task instance or an async function"):
        await system.spawn_task(Owner())  # type: ignore[arg-type]
    task = Fanout([])
    first = await system.spawn_task(task, name="once")
    with pytest.raises(ValueError, match="already spawned"):
        await system.spawn_task(task)
    assert await first.result() == []  # the refused spawn did not take its result


# -- types ------------------------------------------------------------------------------


def _mypy(*paths: Path) -> tuple[str, int]:
    out, err, status = mypy_api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), *map(str, paths)]
    )
    return out + err, status


def test_result_types_check_under_mypy_strict() -> None:
    report, status = _mypy(CHECKS)
    assert status == 0, report


def test_a_wrong_result_type_or_argument_is_an_error(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong_task.py"
    wrong.write_text(
        "from actors import ActorSystem\n\n"
        "async def add(a: int, b: int) -> int:\n"
        "    return a + b\n\n"
        "async def f(system: ActorSystem) -> None:\n"
        "    task = await system.spawn_task(add, 1, 2)\n"
        "    text: str = await task.result()\n"
        "    await system.spawn_task(add, 1, 'two')\n"
    )
    report, status = _mypy(wrong)
    assert status == 1, report
    assert 'Incompatible types in assignment (expression has type "int"' in report, report
    assert 'Argument 1 to "spawn_task" of "ActorSystem" has incompatible type' in report, report
