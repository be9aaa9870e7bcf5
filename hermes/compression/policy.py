"""When to compact and whether to ask the model: pure state, the clock passed in.

- Cooldowns by failure class (Hermes, seed #196; the class is the one
  ``note_failure`` saw last): timeouts and truncated summaries each climb
  ``settings.cooldowns`` (60, 300, 900 s) on their own counter; invalid JSON
  (garbage), a closed stream or an empty summary wait 30 s; any other failure
  60 s; a failure of no known class climbs the ladder on the consecutive count.
  A new cooldown never shortens a longer one still running; a successful model
  summary resets every counter. A forced compaction (``/compress``,
  a provider overflow) gets past it and asks the model.
- Abort hold: a failure that aborted the compaction (``failures.py``: nothing
  written) climbs the same ladder, and until its cooldown ends the threshold
  trigger does not compact at all (a static summary would lose what the abort
  kept); forced compactions get past it.
- Anti-thrash: two compactions in a row each saving under ``min_saving`` pause
  *automatic* compaction until the prompt has grown again, i.e. reaches the size
  left by the last compaction plus ``regrow_ratio`` x threshold. The pause then
  lifts by itself; one more weak pass pauses again (from its own size), a pass
  saving enough ends it. A forced ``/compress`` always runs (and its outcome counts).
- Attempts: at most ``max_attempts_per_turn`` automatic compactions started
  per turn (``note_attempt`` at the start of each, ``begin_turn`` resets).
- Across restarts: ``failure_state`` is what the session keeps of its summary
  failures (the cooldown's deadline, the counters, the hold; seed #196 keeps
  them on the session row), ``restore_failures`` puts it back; both on this
  policy's clock (the session converts to wall-clock time for the store).

Record only passes that finished (an interrupted pass says nothing about thrash).
"""

from __future__ import annotations

import attrs

from hermes.compression.failures import SummaryFailure, aborts
from hermes.compression.settings import CompressionSettings

SHORT_WAIT = 30.0
"""Invalid JSON, a closed stream or an empty summary (seed #196)."""
OTHER_WAIT = 60.0
"""Any other classed failure (seed #196)."""
SHORT = frozenset({SummaryFailure.GARBAGE, SummaryFailure.CLOSED_STREAM, SummaryFailure.EMPTY})
LADDERED = frozenset({SummaryFailure.TIMEOUT, SummaryFailure.TRUNCATED})


@attrs.frozen(slots=True)
class Decision:
    compact: bool
    reason: str

    def __bool__(self) -> bool:
        return self.compact


@attrs.frozen(slots=True, kw_only=True)
class FailureState:
    """A policy's summary-failure state: what a restarted session must get back."""

    until: float | None = None
    """The cooldown's end on the policy's clock (None: none set)."""
    failures: int = 0
    climbs: tuple[tuple[SummaryFailure, int], ...] = ()
    """The laddered classes' counters, in the order of ``SummaryFailure``."""
    held: bool = False
    overloads: int = 0

    @property
    def clear(self) -> bool:
        """Nothing to keep: no failure since the last model summary."""
        return self == FailureState()


@attrs.define
class CompressionPolicy:
    settings: CompressionSettings = attrs.field(factory=CompressionSettings)
    failures: int = 0
    """Consecutive failed summary calls."""
    cooldown_until: float | None = None
    weak_streak: int = 0
    """Consecutive compactions that saved less than ``min_saving``."""
    paused_at: int | None = None
    """Anti-thrash: the prompt size after the compaction that paused, while paused."""
    attempts: int = 0
    """Compactions started in the current turn (``note_attempt``)."""
    last_method: str | None = None
    overloads: int = 0
    """Consecutive summary calls that failed as overloaded."""
    held: bool = False
    """The last failure aborted its compaction: no automatic one until the cooldown ends."""
    last_failure: SummaryFailure | None = None
    """The class of the latest failed summary call (``note_failure``), for its cooldown."""
    climbs: dict[SummaryFailure, int] = attrs.field(factory=dict)
    """Consecutive failures per laddered class (timeouts, truncated summaries)."""

    def copy(self) -> CompressionPolicy:
        """A policy of its own with the same state: its per-class counters are not shared."""
        return attrs.evolve(self, climbs=dict(self.climbs))

    def failure_state(self) -> FailureState:
        """The summary-failure state to keep across restarts (see the module docstring)."""
        order = list(SummaryFailure)
        climbs = sorted(self.climbs.items(), key=lambda item: order.index(item[0]))
        return FailureState(
            until=self.cooldown_until,
            failures=self.failures,
            climbs=tuple(climbs),
            held=self.held,
            overloads=self.overloads,
        )

    def restore_failures(self, state: FailureState) -> None:
        """Take back a kept ``failure_state`` (its ``until`` already on this clock)."""
        self.cooldown_until = state.until
        self.failures = state.failures
        self.climbs = dict(state.climbs)
        self.held = state.held
        self.overloads = state.overloads

    def begin_turn(self) -> None:
        self.attempts = 0

    def note_attempt(self) -> None:
        """A compaction starts (counted even if it is then interrupted)."""
        self.attempts += 1

    def should_use_model(self, now: float, *, forced: bool = False) -> bool:
        """False during a cooldown (use the static summary then), unless ``forced``."""
        return forced or self.cooldown_until is None or now >= self.cooldown_until

    def note_failure(self, failure: SummaryFailure) -> int:
        """A summary call failed as ``failure``; the overloads in a row, this one included."""
        self.overloads = self.overloads + 1 if failure is SummaryFailure.OVERLOADED else 0
        self.last_failure = failure
        return self.overloads

    def aborts(self, failure: SummaryFailure) -> bool:
        """Note a failed summary call; whether it aborts the compaction (``failures.py``,
        or every failure with ``settings.abort_on_summary_failure``)."""
        overloads = self.note_failure(failure)
        return self.settings.abort_on_summary_failure or aborts(failure, overloads)

    def record_abort(self, now: float) -> None:
        """A compaction aborted on its summary's failure: climb the ladder and hold."""
        self._fail(now)
        self.held = True

    def cooldown_remaining(self, now: float) -> float:
        return 0.0 if self.cooldown_until is None else max(self.cooldown_until - now, 0.0)

    def resume_at(self, threshold: int) -> int | None:
        """While paused: the prompt size at which automatic compaction resumes."""
        if self.paused_at is None:
            return None
        return self.paused_at + int(self.settings.regrow_ratio * threshold)

    def should_compact(
        self, tokens: int, threshold: int, forced: bool, now: float | None = None
    ) -> Decision:
        """Whether to compact a prompt of ``tokens`` now, and why (changes no state).

        ``now``: the clock, for the abort hold (``None``: not checked)."""
        if forced:
            return Decision(True, "forced by /compress")
        if not self.settings.enabled:
            return Decision(False, "automatic compression is disabled")
        if tokens < threshold:
            return Decision(False, f"{tokens:,} tokens is under the threshold of {threshold:,}")
        if self.held and now is not None and not self.should_use_model(now):
            return Decision(
                False,
                "held after a summary failure that kept every message; resumes in "
                f"{self.cooldown_remaining(now):.0f} s (/compress gets past it)",
            )
        if self.attempts >= self.settings.max_attempts_per_turn:
            return Decision(
                False,
                f"already compacted {self.attempts} times this turn "
                f"(at most {self.settings.max_attempts_per_turn})",
            )
        resume = self.resume_at(threshold)
        if resume is not None:
            if tokens < resume:
                return Decision(
                    False,
                    f"paused after two compactions that each saved under "
                    f"{self.settings.min_saving:.0%}; resumes at {resume:,} tokens "
                    f"(now {tokens:,})",
                )
            return Decision(True, f"{tokens:,} tokens grew past {resume:,} since the pause")
        return Decision(True, f"{tokens:,} tokens reached the threshold of {threshold:,}")

    def record(
        self,
        before_tokens: int,
        after_tokens: int,
        method: str,
        failed_model_call: bool,
        now: float,
    ) -> None:
        """A finished compaction: sizes around it, how it was summarised, and whether a
        model summary call failed on the way (the static fallback was used then)."""
        self.last_method = method
        self.held = False
        if failed_model_call:
            self._fail(now)
        elif method == "model":
            self.failures = 0
            self.overloads = 0
            self.cooldown_until = None
            self.last_failure = None
            self.climbs.clear()
        saving = (before_tokens - after_tokens) / before_tokens if before_tokens > 0 else 0.0
        if saving < self.settings.min_saving:
            self.weak_streak += 1
            if self.weak_streak >= 2:
                self.paused_at = after_tokens
        else:
            self.weak_streak = 0
            self.paused_at = None

    def _fail(self, now: float) -> None:
        self.failures += 1
        wait = self._wait(self.last_failure)
        self.last_failure = None
        if self.cooldown_until is None or now + wait > self.cooldown_until:
            self.cooldown_until = now + wait  # never shortens a longer live cooldown

    def _wait(self, failure: SummaryFailure | None) -> float:
        ladder = self.settings.cooldowns
        if failure is None:
            return ladder[min(self.failures, len(ladder)) - 1]
        if failure in SHORT:
            return SHORT_WAIT
        if failure in LADDERED:
            step = self.climbs[failure] = self.climbs.get(failure, 0) + 1
            return ladder[min(step, len(ladder)) - 1]
        return OTHER_WAIT
