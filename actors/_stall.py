"""Event-loop stall detection: a watchdog thread fed by a trio task.

A trio instrument only sees a blocking step after it ends, so a wedged loop
needs an observer outside it. A trio task stamps the time every ``interval``;
a daemon thread (the one bare thread the house rules allow) checks the stamp
and, when it is older than ``threshold``, captures every thread's stack and the
trio task tree at that moment, logs them, and hands the report back to trio,
where it is published as a ``LoopStall`` event once the loop runs again.

This module measures real stalls, so it uses the monotonic wall clock, not
trio's clock.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable

import attrs
import trio

from ._events import EventBus, LoopStall

log = logging.getLogger("actors.stall")


@attrs.frozen(slots=True)
class StallReport:
    """What the loop was doing while it was blocked."""

    blocked_for: float
    """Seconds since the loop last ran, when the watchdog noticed."""
    thread_stacks: str
    task_tree: str

    def text(self) -> str:
        return (
            f"event loop blocked for {self.blocked_for:.3f}s\n"
            f"--- trio tasks ---\n{self.task_tree}\n"
            f"--- thread stacks ---\n{self.thread_stacks}"
        )


def format_task_tree(root: trio.lowlevel.Task) -> str:
    """The trio task tree under ``root``, each task with its innermost await frames."""
    lines: list[str] = []

    def walk(task: trio.lowlevel.Task, depth: int) -> None:
        try:
            frames = [
                f"{frame.f_code.co_name}:{lineno}" for frame, lineno in task.iter_await_frames()
            ]
        except Exception as exc:  # the loop may move on while we look
            frames = [f"<unreadable: {type(exc).__name__}>"]
        where = " > ".join(frames[-3:]) if frames else "running"
        lines.append(f"{'  ' * depth}{task.name} [{where}]")
        for nursery in list(task.child_nurseries):
            for child in list(nursery.child_tasks):
                walk(child, depth + 1)

    walk(root, 0)
    return "\n".join(lines)


def format_thread_stacks() -> str:
    """Every Python thread's current stack."""
    names = {t.ident: t.name for t in threading.enumerate()}
    parts = []
    for ident, frame in sys._current_frames().items():
        stack = "".join(traceback.format_stack(frame))
        parts.append(f"thread {names.get(ident, ident)}:\n{stack}")
    return "\n".join(parts)


class LoopStallDetector:
    """Reports when the trio loop is blocked longer than ``threshold`` seconds.

    Run ``await detector.run()`` in a nursery (or ``nursery.start``). Each stall
    is reported once: logged with the task tree and thread stacks at the moment
    it was noticed, passed to ``on_stall`` and published on ``bus`` when the loop
    recovers.
    """

    def __init__(
        self,
        threshold: float = 1.0,
        *,
        interval: float | None = None,
        bus: EventBus | None = None,
        on_stall: Callable[[StallReport, float], None] | None = None,
        keep: int = 32,
    ) -> None:
        if not threshold > 0:
            raise ValueError(f"stall threshold must be > 0 seconds, got {threshold!r}")
        self.threshold = threshold
        self.interval = interval if interval is not None else threshold / 4
        if not self.interval > 0:
            raise ValueError(f"stall interval must be > 0 seconds, got {interval!r}")
        self.bus = bus
        self.on_stall = on_stall
        self.reports: deque[tuple[StallReport, float]] = deque(maxlen=keep)
        """(report, total stall seconds) of recent stalls."""
        self.stalls = 0
        self._fed = time.monotonic()
        self._pending: deque[StallReport] = deque(maxlen=keep)
        self._longest_gap = 0.0
        """The longest gap over ``threshold`` the loop saw since it last published a report:
        the watchdog may file its report (stacks take time to format) after the loop woke."""
        self._stop = threading.Event()
        self._root: trio.lowlevel.Task | None = None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Feed the watchdog until cancelled; the thread stops with it."""
        self._root = trio.lowlevel.current_root_task()
        self._fed = time.monotonic()
        thread = threading.Thread(target=self._watch, name="loop-stall-watchdog", daemon=True)
        thread.start()
        task_status.started()
        try:
            while True:
                before = time.monotonic()
                self._fed = before
                await trio.sleep(self.interval)
                gap = time.monotonic() - before - self.interval
                self._fed = time.monotonic()
                if gap > self.threshold:
                    self._longest_gap = max(self._longest_gap, gap)
                self._publish_pending()
        finally:
            self._stop.set()

    def _publish_pending(self) -> None:
        while self._pending:
            report = self._pending.popleft()
            total = max(self._longest_gap, report.blocked_for)
            self._longest_gap = 0.0
            self.reports.append((report, total))
            if self.on_stall is not None:
                self.on_stall(report, total)
            if self.bus is not None:
                self.bus.publish(LoopStall(total, report.text()))

    def _watch(self) -> None:
        reported = False
        check = min(self.interval, self.threshold / 4)
        while not self._stop.wait(check):
            lag = time.monotonic() - self._fed
            if lag <= self.threshold:
                reported = False
                continue
            if reported:
                continue
            reported = True
            self.stalls += 1
            root = self._root
            report = StallReport(
                blocked_for=lag,
                thread_stacks=format_thread_stacks(),
                task_tree=format_task_tree(root) if root is not None else "<unknown>",
            )
            self._pending.append(report)
            log.error("%s", report.text())
