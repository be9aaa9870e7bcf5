"""Rate limits for process notices: pure state machines clocked by the caller.

Each method takes ``now`` (the registry passes ``trio.current_time()``), so the
rules are tested with trio's ``autojump_clock`` and never read a clock
themselves.

``PatternLimiter`` (one per watched process), Hermes' rules:

- at most one pattern notice per ``interval`` (15 s); a notice opens a window
  of that length and matches inside it are dropped (counted, and reported
  with the next notice as ``suppressed``);
- a window in which matches were dropped is one *strike*; ``max_strikes`` (3)
  such windows in a row disable pattern watching (the watcher then switches
  the process to notify-on-complete); a window without drops clears them;
- at most ``lifetime`` (8) notices per process; the 8th disables watching.

``Breaker`` (one per registry): at most ``limit`` (15) notices within any
``period`` (10 s); the next one trips it, and for ``cooldown`` (30 s) every
notice is held. ``release`` then closes it and says how many were held.
"""

from __future__ import annotations

import enum
from collections import deque

import attrs

from .config import ProcessConfig


class Verdict(enum.Enum):
    EMIT = "emit"
    DROP = "drop"
    OFF = "off"
    """Watching is disabled: nothing to do."""


class Disabled(enum.Enum):
    RATE = "rate"
    """Matches were dropped in ``max_strikes`` windows in a row."""
    LIFETIME = "lifetime"
    """The process used up its ``lifetime`` notices."""


@attrs.frozen(slots=True)
class Offer:
    """The limiter's answer to one batch of matching lines."""

    verdict: Verdict
    suppressed: int = 0
    """For ``EMIT``: batches dropped since the previous notice."""
    disabled: Disabled | None = None
    """Set on the offer that disabled watching (an ``EMIT`` or a ``DROP``)."""


@attrs.define(slots=True)
class PatternLimiter:
    """Per-process pattern-notice limiter (see the module docstring)."""

    interval: float = 15.0
    max_strikes: int = 3
    lifetime: int = 8
    emitted: int = 0
    strikes: int = 0
    suppressed: int = 0
    """Batches dropped since the last notice."""
    disabled: Disabled | None = None
    _window_start: float | None = None
    _window_dropped: bool = False

    def offer(self, now: float) -> Offer:
        """Matching lines arrived at ``now``: may a notice go out?"""
        if self.disabled is not None:
            return Offer(Verdict.OFF)
        start = self._window_start
        if start is None or now - start >= self.interval:
            if start is not None and not self._window_dropped:
                self.strikes = 0  # the last window was clean: strikes must be in a row
            self._window_start = now
            self._window_dropped = False
            self.emitted += 1
            suppressed, self.suppressed = self.suppressed, 0
            if self.emitted >= self.lifetime:
                self.disabled = Disabled.LIFETIME
            return Offer(Verdict.EMIT, suppressed, self.disabled)
        self.suppressed += 1
        if not self._window_dropped:
            self._window_dropped = True
            self.strikes += 1
            if self.strikes >= self.max_strikes:
                self.disabled = Disabled.RATE
                return Offer(Verdict.DROP, 0, Disabled.RATE)
        return Offer(Verdict.DROP)


class Admission(enum.Enum):
    PASS = "pass"
    TRIP = "trip"
    """This notice tripped the breaker: it is held, and a cooldown starts."""
    HOLD = "hold"
    """The breaker is open: held until it closes."""


@attrs.define(slots=True)
class Breaker:
    """Registry-wide circuit breaker over notices (see the module docstring)."""

    limit: int = 15
    period: float = 10.0
    cooldown: float = 30.0
    open_until: float | None = None
    """While set, the breaker is open (tripped) until this time."""
    held: int = 0
    """Notices held since it tripped (the tripping one included)."""
    trips: int = 0
    _times: deque[float] = attrs.field(factory=deque)

    def admit(self, now: float) -> Admission:
        if self.open_until is not None:
            if now < self.open_until:
                self.held += 1
                return Admission.HOLD
            self.release(now)  # cooled down but not released yet: close it first
        times = self._times
        while times and times[0] <= now - self.period:
            times.popleft()
        if len(times) >= self.limit:
            times.clear()
            self.open_until = now + self.cooldown
            self.held = 1
            self.trips += 1
            return Admission.TRIP
        times.append(now)
        return Admission.PASS

    def release(self, now: float) -> int | None:
        """Close the breaker if its cooldown is over; returns how many notices it held."""
        if self.open_until is None or now < self.open_until:
            return None
        held, self.held, self.open_until = self.held, 0, None
        return held


def disabled_text(reason: Disabled, config: ProcessConfig) -> str:
    """What the process's notes say when pattern watching was disabled, and why."""
    if reason is Disabled.RATE:
        return (
            f"pattern watching was disabled: matches came faster than one notice per "
            f"{config.pattern_interval:g}s for {config.pattern_strikes} windows in a row; "
            "it will notify on completion instead"
        )
    return (
        f"pattern watching stopped after {config.pattern_lifetime} notices; "
        "it will notify on completion instead"
    )
