"""``task_spec``: a one-shot task as a supervised child (temporary unless told otherwise)."""

from __future__ import annotations

import pytest
import trio

from actors import Actor, ActorSystem, Task
from supervisors import ChildSpec, Restart, SpecError, Supervisor, SupervisorFlags, task_spec

from .helpers import ref_of, start_sup


async def test_a_temporary_task_runs_once_and_its_spec_is_forgotten(system: ActorSystem) -> None:
    runs: list[str] = []
    go = trio.Event()

    async def once(tag: str) -> str:
        await go.wait()
        runs.append(tag)
        return tag

    spec = task_spec("once", once, "a")
    assert spec.restart is Restart.TEMPORARY
    with trio.fail_after(10):
        sup, client = await start_sup(system, [spec])
        ref = await ref_of(client, "once")
        assert ref.path == "/sup/once"
        go.set()
        reason = await ref.wait_exited()
        # The Exit reached the supervisor (system lane) before this call did.
        assert await client.which_children() == []
    assert reason.is_normal and runs == ["a"]
    assert sup.is_alive
    await sup.stop()


class Flaky(Task[int]):
    """Crashes until it has run ``failures`` times before, then returns how often it ran."""

    def __init__(self, runs: list[int], failures: int, done: trio.Event) -> None:
        self.runs, self.failures, self.done = runs, failures, done

    async def run(self) -> int:
        self.runs.append(self.ctx.restarts)
        if len(self.runs) <= self.failures:
            raise RuntimeError(f"run {len(self.runs)} fails")
        self.done.set()
        return len(self.runs)


async def test_a_transient_task_runs_again_after_a_crash_until_it_returns(
    system: ActorSystem,
) -> None:
    runs: list[int] = []
    done = trio.Event()
    spec = task_spec("flaky", Flaky, runs, 2, done, restart=Restart.TRANSIENT)
    with trio.fail_after(10):
        sup = await system.spawn(
            Supervisor([spec], SupervisorFlags(intensity=5, period=30.0)), name="sup"
        )
        await done.wait()
    assert runs == [0, 1, 2]  # two crashes, two restarts, then a normal exit
    assert sup.is_alive
    await sup.stop()


def test_task_spec_refuses_what_is_not_a_task() -> None:
    with pytest.raises(SpecError, match="task spec start"):
        task_spec("x", Actor)
    with pytest.raises(SpecError, match="task spec start"):
        task_spec("x", Actor())
    with pytest.raises(SpecError, match="task spec start"):
        task_spec("x", 42)  # type: ignore[arg-type]
    assert isinstance(task_spec("x", Flaky), ChildSpec)
