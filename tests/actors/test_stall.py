"""Loop-stall detection. Real clock: the watchdog measures real stalls in a real thread."""

from __future__ import annotations

import time

import pytest
import trio

from actors import ActorSystem, LoopStall, LoopStallDetector
from actors import _stall as stall


def _wedge_the_loop_with_blocking_sleep(seconds: float) -> None:
    """A blocking call on the trio thread, under a name the report must show."""
    time.sleep(seconds)


async def test_blocked_loop_is_reported_once_with_stacks_and_task_tree(
    system: ActorSystem,
) -> None:
    detector = LoopStallDetector(threshold=0.2, bus=system.events)
    with system.events.subscribe() as sub, trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(detector.run)
            await trio.sleep(0.1)
            _wedge_the_loop_with_blocking_sleep(0.6)
            await trio.sleep(0.5)  # let the detector run and publish
            nursery.cancel_scope.cancel()
        events = [e for e in sub.drain() if isinstance(e, LoopStall)]
    assert detector.stalls == 1
    assert len(detector.reports) == 1
    report, duration = detector.reports[0]
    assert duration >= 0.5
    assert report.blocked_for > detector.threshold
    assert "_wedge_the_loop_with_blocking_sleep" in report.thread_stacks
    assert "LoopStallDetector.run" in report.task_tree
    assert "test_blocked_loop_is_reported_once" in report.task_tree
    text = report.text()
    assert "--- trio tasks ---" in text
    assert "--- thread stacks ---" in text
    assert len(events) == 1
    assert events[0].duration == duration
    assert events[0].report == text
    assert "_wedge_the_loop_with_blocking_sleep" in events[0].report


async def test_healthy_loop_is_not_reported(system: ActorSystem) -> None:
    detector = LoopStallDetector(threshold=0.2, bus=system.events)
    with system.events.subscribe() as sub, trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(detector.run)
            for _ in range(20):
                await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
        events = [e for e in sub.drain() if isinstance(e, LoopStall)]
    assert detector.stalls == 0
    assert list(detector.reports) == []
    assert events == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"threshold": 0}, "stall threshold must be > 0"),
        ({"threshold": -1}, "stall threshold must be > 0"),
        ({"threshold": 1, "interval": 0}, "stall interval must be > 0"),
    ],
)
def test_detector_rejects_invalid_settings(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LoopStallDetector(**kwargs)


async def test_a_report_filed_after_the_loop_woke_still_gets_the_whole_stall(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a busy machine the watchdog's stacks take long to format: the loop wakes first."""
    slow_format = stall.format_thread_stacks

    def formatted_slowly() -> str:
        time.sleep(0.5)  # in the watchdog thread: the wedge below ends meanwhile
        return slow_format()

    monkeypatch.setattr(stall, "format_thread_stacks", formatted_slowly)
    published = trio.Event()
    detector = LoopStallDetector(threshold=0.2, on_stall=lambda *_: published.set())
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(detector.run)
            await trio.sleep(0.1)
            _wedge_the_loop_with_blocking_sleep(0.6)
            await published.wait()
            nursery.cancel_scope.cancel()
    ((report, duration),) = detector.reports
    # the loop's own gap: the 0.6 s wedge less at most one feeding interval
    assert duration >= 0.6 - detector.interval
    assert report.blocked_for < duration  # more than the watchdog had seen when it filed
