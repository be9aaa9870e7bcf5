"""``TaskChild``, the one helper for an owner's one-shot tasks (turn, reviewer, compressor,
tool worker): temporary, brutal, unlinked; the owner reads how each one ended."""

from __future__ import annotations

from typing import Any

import attrs
import trio

from actors import Actor, ActorSystem, Down, ExitKind, ExitReason, Task
from hermes.session.task_child import TaskChild, value_or_none


class Returns(Task[str]):
    async def run(self) -> str:
        return "done"


class Raises(Task[str]):
    async def run(self) -> str:
        raise ValueError("a bug in the task")


class Sleeps(Task[str]):
    def __init__(self, started: trio.Event) -> None:
        self.started = started

    async def run(self) -> str:
        self.started.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")


class Gated(Task[str]):
    def __init__(self, gate: trio.Event) -> None:
        self.gate = gate

    async def run(self) -> str:
        await self.gate.wait()
        return "done"


@attrs.frozen
class Run:
    task: Task[str]
    monitored: bool = False


@attrs.frozen
class Stop:
    pass


class Owner(Actor):
    """Starts one task child at a time, reports what it sees of it."""

    def __init__(self) -> None:
        self.child: TaskChild[str] | None = None
        self.downs: list[Down] = []
        self.down_seen = trio.Event()

    async def receive(self, message: Any) -> Any:
        match message:
            case Run(task=task, monitored=True):
                self.child = await TaskChild.start(self.ctx, task, name="job", monitored=True)
                return None  # the owner hears of its end by a Down
            case Run(task=task):
                self.child = await TaskChild.start(self.ctx, task, name="job")
                return await self.child.outcome()
            case Stop():
                assert self.child is not None
                return await self.child.stop()
            case Down():
                assert self.child is not None and self.child.is_down(message)
                self.downs.append(message)
                self.down_seen.set()
        return None


async def test_the_outcome_is_the_tasks_value(system: ActorSystem) -> None:
    owner = Owner()
    ref = await system.spawn(owner)
    with trio.fail_after(5):
        outcome = await ref.call(Run(Returns()))
    assert outcome == "done" and value_or_none(outcome) == "done"
    assert owner.child is not None and owner.child.path.endswith("/job")


async def test_a_crash_is_the_owners_to_read_and_never_takes_it_down(system: ActorSystem) -> None:
    ref = await system.spawn(Owner())
    with trio.fail_after(5):
        outcome = await ref.call(Run(Raises()))
        again = await ref.call(Run(Returns()))  # unlinked: the owner lives on
    assert isinstance(outcome, ExitReason) and outcome.kind is ExitKind.ERROR
    assert "a bug in the task" in outcome.describe()
    assert value_or_none(outcome) is None
    assert again == "done" and ref.is_alive


async def test_stop_kills_at_once_and_a_finished_task_keeps_its_value(
    system: ActorSystem,
) -> None:
    owner = Owner()
    ref = await system.spawn(owner)
    started = trio.Event()
    with trio.fail_after(5):
        await ref.call(Run(Sleeps(started), monitored=True))
        await started.wait()
        stopped = await ref.call(Stop())
        assert isinstance(stopped, ExitReason) and stopped.kind is ExitKind.CANCELLED
        gate = trio.Event()
        await ref.call(Run(Gated(gate), monitored=True))
        gate.set()
        await owner.down_seen.wait()  # it returned: the owner is told by its monitor
        kept = await ref.call(Stop())
    assert kept == "done"
    assert len(owner.downs) == 1  # the stopped task's monitor was dropped with its stop
    assert ref.is_alive
