"""The phased shutdown: phases in order, per-phase timeouts, the report, and SIGTERM.

The first tests run ``run_phases`` in process (``autojump_clock``: the timeouts
pass at once); the last ones run ``app_fixture.py`` in its ``phased`` mode as a
real process and send it SIGTERM.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import trio
from trio.testing import MockClock

from actors import ActorSystem
from supervisors import (
    RUNTIME_PHASE,
    ExitCode,
    Phase,
    RanOver,
    SpecError,
    Step,
    StepStatus,
    run_phases,
)

from .app_fixture import Recorder
from .test_application import STARTS, STOPS, application

Log = list[str]


def record(log: Log, name: str, *, hang: bool = False, fail: bool = False) -> Step:
    """A step that logs ``<name> start``, then hangs, raises or logs ``<name> end``."""

    async def run() -> None:
        log.append(f"{name} start")
        await trio.sleep(0.1)
        if hang:
            await trio.sleep_forever()
        if fail:
            raise RuntimeError(f"{name} failed on purpose")
        log.append(f"{name} end")

    return Step(name, run)


async def test_phases_run_in_order_and_the_steps_of_one_phase_concurrently(
    autojump_clock: MockClock,
) -> None:
    log: Log = []
    phases = [
        Phase("first", [record(log, "a"), record(log, "b")], timeout=5.0),
        Phase("second", [record(log, "c")], timeout=5.0),
    ]
    async with trio.open_nursery() as nursery:
        report = await run_phases(phases, nursery)
    # a and b both started before either ended; c only after both had ended.
    assert sorted(log[:2]) == ["a start", "b start"]
    assert sorted(log[2:4]) == ["a end", "b end"]
    assert log[4:] == ["c start", "c end"]
    assert [phase.name for phase in report.phases] == ["first", "second"]
    assert report.clean and not report.problems
    assert "nothing ran over (first, second)" in report.summary()


async def test_a_hanging_step_is_cancelled_at_its_phases_timeout_and_the_next_phase_runs(
    autojump_clock: MockClock,
) -> None:
    log: Log = []
    phases = [
        Phase("stuck", [record(log, "hang", hang=True), record(log, "quick")], timeout=2.0),
        Phase("after", [record(log, "later")], timeout=5.0),
    ]
    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        report = await run_phases(phases, nursery)
    assert "later end" in log and "hang end" not in log
    stuck = report.phases[0]
    # Not a moment longer than its own timeout (the next phase has its own).
    assert stuck.elapsed == pytest.approx(2.0)
    assert report.phases[1].steps[0].elapsed == pytest.approx(0.1)
    assert trio.current_time() - started == pytest.approx(2.1)
    hang, quick = stuck.steps
    assert (hang.phase, hang.step, hang.status) == ("stuck", "hang", StepStatus.RAN_OVER)
    assert hang.elapsed == pytest.approx(2.0)
    assert hang.reason == "cancelled at its phase's 2s timeout"
    assert quick.status is StepStatus.DONE and quick.elapsed == pytest.approx(0.1)
    assert [p.step for p in report.problems] == ["hang"]
    assert "stuck/hang ran over after 2.00s: cancelled at its phase's 2s timeout" in (
        report.summary()
    )


async def test_a_failing_step_is_reported_and_later_phases_still_run(
    autojump_clock: MockClock,
) -> None:
    log: Log = []
    phases = [
        Phase("one", [record(log, "bad", fail=True), record(log, "good")], timeout=5.0),
        Phase("two", [record(log, "next")], timeout=5.0),
    ]
    async with trio.open_nursery() as nursery:
        report = await run_phases(phases, nursery)
    assert log[-1] == "next end"
    (bad,) = report.problems
    assert (bad.phase, bad.step, bad.status) == ("one", "bad", StepStatus.FAILED)
    assert bad.reason == "RuntimeError: bad failed on purpose"
    assert bad.elapsed == pytest.approx(0.1)
    assert [s.status for s in report.steps] == [
        StepStatus.FAILED,
        StepStatus.DONE,
        StepStatus.DONE,
    ]


async def test_a_step_that_cannot_be_cancelled_is_abandoned_and_the_next_phase_runs(
    autojump_clock: MockClock,
) -> None:
    log: Log = []
    released = trio.Event()

    async def stubborn() -> None:
        with trio.CancelScope(shield=True):  # as a call that ignores cancellation
            await released.wait()
        log.append("stubborn end")

    phases = [
        Phase("stuck", [Step("stubborn", stubborn)], timeout=1.0),
        Phase("after", [record(log, "later")], timeout=5.0),
    ]
    async with trio.open_nursery() as nursery:
        report = await run_phases(phases, nursery, grace=0.5)
        # The next phase ran while the abandoned step still lingers in the nursery.
        assert log == ["later start", "later end"]
        released.set()
    assert log[-1] == "stubborn end"
    step = report.phases[0].steps[0]
    assert step.status is StepStatus.ABANDONED
    assert step.elapsed == pytest.approx(1.5)
    assert "left running" in step.reason
    assert report.phases[0].elapsed == pytest.approx(1.5)


async def test_a_step_calling_an_actor_waits_for_its_reply_and_ran_over_is_its_own_status(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Recorder("/dev/null"), name="echo")  # echoes what it gets

    async def gives_up() -> None:
        raise RanOver("3 sessions did not settle")

    phases = [Phase("p", [Step.calling("echo", ref, "hi"), Step("own", gives_up)], timeout=1.0)]
    async with trio.open_nursery() as nursery:
        report = await run_phases(phases, nursery)
    echo, own = report.steps
    assert echo.status is StepStatus.DONE
    assert (own.status, own.reason) == (StepStatus.RAN_OVER, "3 sessions did not settle")


def test_phases_and_steps_are_checked_where_they_are_written() -> None:
    async def nothing() -> None:
        pass

    with pytest.raises(SpecError, match="invalid phase timeout: 0"):
        Phase("p", [], timeout=0)
    with pytest.raises(SpecError, match="invalid phase timeout: inf"):
        Phase("p", [], timeout=float("inf"))
    with pytest.raises(SpecError, match="invalid phase name: ''"):
        Phase("", [], timeout=1.0)
    with pytest.raises(SpecError, match="two steps of one phase are named 'a'"):
        Phase("p", [Step("a", nothing), Step("a", nothing)], timeout=1.0)
    with pytest.raises(SpecError, match="invalid phase step: 'a'"):
        Phase("p", ["a"], timeout=1.0)  # type: ignore[list-item]
    with pytest.raises(SpecError, match="invalid step run: 3"):
        Step("a", 3)  # type: ignore[arg-type]


async def test_two_phases_of_one_name_are_refused() -> None:
    phases = [Phase("p", [], timeout=1.0), Phase("p", [], timeout=1.0)]
    async with trio.open_nursery() as nursery:
        with pytest.raises(SpecError, match="two shutdown phases are named 'p'"):
            await run_phases(phases, nursery)


# -- a real process ----------------------------------------------------------------------


PHASED = ["phase input", "phase hang", "phase quick", "phase flush"]
"""What the fixture's phases write (``hang``'s two steps run concurrently)."""


async def test_sigterm_runs_the_phases_in_order_then_stops_the_tree_and_reports(
    tmp_path: Path,
) -> None:
    async with application("phased", tmp_path) as app:
        await app.ready()
        app.signal(signal.SIGTERM)
        assert await app.exit_code() == ExitCode.OK
        lines = app.lines()
        assert lines[:3] == STARTS
        assert lines[3] == "phase input"
        assert sorted(lines[4:6]) == ["phase hang", "phase quick"]
        assert lines[6:10] == ["phase flush", *STOPS]  # stop-runtime: reverse spec order
        report = lines[10]
        assert report.startswith("report shutdown in ")
        assert "hang/slow ran over after 0.5" in report
        assert "flush/broken failed after " in report
        assert "RuntimeError: flush failed on purpose" in report
        assert lines[11:] == [
            "outcome input/stop done",
            "outcome hang/slow ran over",
            "outcome hang/quick done",
            "outcome flush/broken failed",
            f"outcome {RUNTIME_PHASE}/app done",
        ]
        assert "hang/slow ran over" in app.stderr()  # logged as well


async def test_a_second_sigterm_during_the_shutdown_does_not_start_it_again(
    tmp_path: Path,
) -> None:
    async with application("phased-held", tmp_path) as app:
        await app.ready()
        app.signal(signal.SIGTERM)
        await app.line("phase hang")  # ``hang`` waits for a SIGHUP
        app.signal(signal.SIGTERM)
        for _ in range(600):  # up to 30 s for the log line
            if "already shutting down" in app.stderr():
                break
            await trio.sleep(0.05)
        assert "already shutting down" in app.stderr()
        assert app.proc.returncode is None
        app.signal(signal.SIGHUP)  # the phase ends; the shutdown goes on, once
        assert await app.exit_code() == ExitCode.OK
        lines = app.lines()
        for line in [*PHASED, *STOPS, "reload"]:
            assert lines.count(line) == 1, lines
        assert lines.count("outcome input/stop done") == 1
        assert "outcome hang/slow done" in lines
