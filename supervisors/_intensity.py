"""Restart intensity: at most ``intensity`` restarts within a sliding ``period``."""

from __future__ import annotations

from collections import deque

from actors import ExitKind, ExitReason

GAVE_UP = "reached max restart intensity"
"""How the ``shutdown`` exit reason of a supervisor that gave up begins (OTP's words)."""


def gave_up(reason: ExitReason | None) -> bool:
    """True if ``reason`` is the exit of a supervisor that exceeded its restart intensity."""
    return (
        reason is not None
        and reason.kind is ExitKind.SHUTDOWN
        and reason.detail.startswith(GAVE_UP)
    )


class RestartWindow:
    """Remembers recent restarts and says when one more would exceed the limit.

    Its two deques are made at the first restart: most supervisors never
    restart anything, and two empty deques are ~1.3 KB of every supervisor
    (one per session, for its services).
    """

    __slots__ = ("_history", "_times", "intensity", "period", "total")

    def __init__(self, intensity: int, period: float) -> None:
        self.intensity = intensity
        self.period = period
        self._times: deque[float] | None = None
        self._history: deque[tuple[str, ExitReason]] | None = None
        self.total = 0

    @property
    def history(self) -> tuple[tuple[str, ExitReason], ...]:
        """The latest restarts (child id, why), oldest first: at most max(intensity + 1, 10)."""
        return tuple(self._history) if self._history is not None else ()

    def record(self, now: float, child_id: str, reason: ExitReason) -> bool:
        """Count one restart at ``now``; True if that exceeds the limit."""
        self.total += 1
        if self._history is None or self._times is None:
            self._history = deque(maxlen=max(self.intensity + 1, 10))
            self._times = deque()
        self._history.append((child_id, reason))
        times = self._times
        times.append(now)
        while times and times[0] <= now - self.period:
            times.popleft()
        return len(times) > self.intensity

    def recent(self) -> int:
        """Restarts currently inside the window."""
        return len(self._times) if self._times is not None else 0
