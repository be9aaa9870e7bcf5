"""``BarrierWatch`` on its own (seed #221): a wait ends at its limit on trio's autojump
clock, and a pid's exit ends it through its pidfd; the judge's wait fields are read."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from trio.testing import MockClock

from actors import ActorSystem
from hermes.goals.barrier import WAIT_LIMIT, Barrier, BarrierWatch
from hermes.goals.judge import Verdict, read_verdict


@pytest.fixture
def autojump_clock() -> MockClock:
    return MockClock(autojump_threshold=0.05)


async def test_a_wait_on_a_pid_that_never_ends_lifts_at_its_limit(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    sleeper = await trio.lowlevel.open_process(["sleep", "600"])
    try:
        started = trio.current_time()
        ref = await system.spawn_task(BarrierWatch(Barrier(pid=sleeper.pid), None), name="w")
        news = await ref.result()
        assert trio.current_time() - started == pytest.approx(WAIT_LIMIT, abs=1)
        assert news == f"the wait on pid {sleeper.pid} reached its 1800 s limit (it still runs)"
    finally:
        sleeper.kill()
        await sleeper.wait()


async def test_a_pid_exit_ends_the_wait(system: ActorSystem) -> None:
    sleeper = await trio.lowlevel.open_process(["sleep", "600"])
    ref = await system.spawn_task(BarrierWatch(Barrier(pid=sleeper.pid), None), name="w")
    with trio.fail_after(10):
        await trio.testing.wait_all_tasks_blocked()  # the watch has seen the pid alive
        sleeper.kill()
        await sleeper.wait()
        assert await ref.result() == f"pid {sleeper.pid} exited"


def test_the_judges_wait_names_a_process_first_then_a_pid_then_a_time() -> None:
    both = read_verdict({"verdict": "wait", "reason": "r", "wait_on_session": "proc_a",
                         "wait_on_pid": 7}, "")  # fmt: skip
    assert both.verdict is Verdict.WAIT and both.wait_on_session == "proc_a"
    pid = read_verdict({"verdict": "wait", "reason": "r", "wait_on_pid": 7}, "")
    assert pid.wait_on_pid == 7 and pid.wait_on_session is None
    timed = read_verdict({"verdict": "wait", "reason": "r", "wait_seconds": 30}, "")
    assert timed.wait_seconds == 30.0
    nothing = read_verdict({"verdict": "wait", "reason": "r", "wait_on_pid": True}, "")
    assert nothing.verdict is Verdict.CONTINUE and "a wait on nothing" in nothing.reason
