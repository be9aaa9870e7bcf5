"""Per-actor timers: a heap of deadlines served by the actor's own loop.

Timers cost no task: the actor's receive loop waits until the earliest deadline
and fires what is due. They die with the actor because they live in it.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable


class Timer:
    """A scheduled one-shot or periodic action; ``cancel()`` stops it."""

    __slots__ = ("action", "cancelled", "deadline", "period")

    def __init__(self, deadline: float, period: float | None, action: Callable[[], None]) -> None:
        self.deadline = deadline
        self.period = period
        self.action = action
        self.cancelled = False

    def cancel(self) -> None:
        """Stop the timer; a cancelled timer never fires again."""
        self.cancelled = True
        # The action is often a closure that holds this timer (liveness ticks
        # cancel themselves): dropping it frees both by reference counting.
        self.action = _never


class TimerQueue:
    """A min-heap of timers keyed by trio deadline."""

    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()

    def add(self, timer: Timer) -> Timer:
        heapq.heappush(self._heap, (timer.deadline, next(self._seq), timer))
        return timer

    def next_deadline(self) -> float:
        """Earliest live deadline, or +inf."""
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf

    def fire_due(self, now: float) -> int:
        """Run every timer due at ``now``; reschedule periodic ones. Returns how many fired."""
        fired = 0
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, _, timer = heapq.heappop(heap)
            if timer.cancelled:
                continue
            if timer.period is not None:
                # Skip missed periods instead of firing a burst after a long handler.
                timer.deadline += timer.period
                if timer.deadline <= now:
                    timer.deadline = now + timer.period
                self.add(timer)
                timer.action()
            else:
                action = timer.action
                timer.cancel()  # a fired one-shot lets go of its action (see ``cancel``)
                action()
            fired += 1
        return fired

    def cancel_all(self) -> None:
        """Cancel every timer (the actor exited); see ``Timer.cancel``."""
        for _, _, timer in self._heap:
            timer.cancel()
        self._heap.clear()

    def __len__(self) -> int:
        return len(self._heap)


def _never() -> None:
    """The action of a cancelled timer."""
