"""Phased shutdown: named phases in order, each with its own timeout, and a report.

    phases = [
        Phase("stop-input", [Step("gateway", refuse_new_work)], timeout=2.0),
        Phase("flush", [Step("db", flush_db), Step("log", flush_log)], timeout=10.0),
    ]
    report = await run_phases(phases, nursery)

Phases run one after the other, in order. The steps of one phase run
concurrently, each in its own task. A step that is still running at its
phase's deadline is cancelled and recorded as having run over; one that does
not even react to the cancellation within ``grace`` is abandoned (trio cannot
end a task from outside: it lingers in ``nursery`` until it returns) and the
next phase starts anyway. A step that raises is recorded as failed, with the
error, and the later steps and phases still run (as Akka's
``CoordinatedShutdown`` with ``recover = on``). ``run_application`` appends the
last phase itself: ``stop-runtime``, which stops the supervision tree in
reverse spec order.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import attrs
import trio

from actors import CallTarget, is_number

from ._errors import SpecError

StepFn = Callable[[], Awaitable[object]]
"""What a step runs: an async callable taking no arguments."""


class RanOver(Exception):
    """Raised by a step that bounds its own work and ran past that bound.

    The step is recorded as ``RAN_OVER`` with the message as its reason, not as
    failed: for a step that gave up on part of its work on purpose (a stop that
    had to kill).
    """


class StepStatus(enum.Enum):
    DONE = "done"
    FAILED = "failed"
    """It raised; ``reason`` names the error."""
    RAN_OVER = "ran over"
    """Cancelled at its phase's deadline (or it raised ``RanOver``)."""
    ABANDONED = "abandoned"
    """It did not react to the cancellation within the grace: left running."""


def _check_name(what: str) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: Any) -> None:
        if not isinstance(value, str) or not value.strip() or "/" in value:
            expected = "a non-empty str without '/'"
            raise SpecError(f"invalid {what} name: {value!r} (expected {expected})")

    return check


def _check_run(_: Any, __: Any, value: Any) -> None:
    if not callable(value):
        raise SpecError(f"invalid step run: {value!r} (expected an async callable)")


@attrs.frozen(slots=True)
class Step:
    """One piece of a phase: ``run()`` is awaited within the phase's timeout."""

    name: str = attrs.field(validator=_check_name("step"))
    run: StepFn = attrs.field(validator=_check_run)

    @classmethod
    def calling(cls, name: str, target: CallTarget, request: object) -> Step:
        """A step that calls an actor (or a ``ChildHandle``) and waits for its reply,
        for as long as its phase allows."""

        async def run() -> object:
            return await target.call(request, timeout=math.inf)

        return cls(name, run)


def _check_timeout(_: Any, __: Any, value: Any) -> None:
    if not is_number(value) or not 0 < value < math.inf:
        raise SpecError(f"invalid phase timeout: {value!r} (expected seconds > 0, finite)")


def _steps(value: Iterable[Step]) -> tuple[Step, ...]:
    steps = tuple(value)
    for step in steps:
        if not isinstance(step, Step):
            raise SpecError(f"invalid phase step: {step!r} (expected a Step)")
    names = [step.name for step in steps]
    for name in names:
        if names.count(name) > 1:
            raise SpecError(f"two steps of one phase are named {name!r}")
    return steps


@attrs.frozen(slots=True)
class Phase:
    """Steps that run concurrently, all within ``timeout`` seconds."""

    name: str = attrs.field(validator=_check_name("phase"))
    steps: tuple[Step, ...] = attrs.field(converter=_steps)
    timeout: float = attrs.field(validator=_check_timeout)


@attrs.frozen(slots=True, kw_only=True)
class StepOutcome:
    """How one step ended."""

    phase: str
    step: str
    status: StepStatus
    elapsed: float
    """Seconds from its start until it ended (or was abandoned)."""
    reason: str = ""
    """Why it failed, ran over or was abandoned; empty when done."""

    def describe(self) -> str:
        text = f"{self.phase}/{self.step} {self.status.value} after {self.elapsed:.2f}s"
        return f"{text}: {self.reason}" if self.reason else text


@attrs.frozen(slots=True, kw_only=True)
class PhaseOutcome:
    name: str
    timeout: float
    elapsed: float
    steps: tuple[StepOutcome, ...]


@attrs.frozen(slots=True)
class ShutdownReport:
    """Every phase that ran, in order, with how each of its steps ended."""

    phases: tuple[PhaseOutcome, ...]

    @property
    def steps(self) -> tuple[StepOutcome, ...]:
        return tuple(step for phase in self.phases for step in phase.steps)

    @property
    def problems(self) -> tuple[StepOutcome, ...]:
        """The steps that did not end ``DONE``."""
        return tuple(step for step in self.steps if step.status is not StepStatus.DONE)

    @property
    def clean(self) -> bool:
        return not self.problems

    @property
    def elapsed(self) -> float:
        return sum(phase.elapsed for phase in self.phases)

    def summary(self) -> str:
        """One line: the phases and their time, or what ran over or failed."""
        if self.clean:
            names = ", ".join(phase.name for phase in self.phases)
            return f"shutdown in {self.elapsed:.2f}s, nothing ran over ({names})"
        problems = "; ".join(step.describe() for step in self.problems)
        return f"shutdown in {self.elapsed:.2f}s: {problems}"


@attrs.define(slots=True)
class _Run:
    step: Step
    phase: Phase
    started: float = 0.0
    ended: float | None = None
    failure: BaseException | None = None
    cancelled: bool = False
    done: trio.Event = attrs.Factory(trio.Event)

    async def __call__(self, deadline: float) -> None:
        self.started = trio.current_time()
        try:
            with trio.CancelScope(deadline=deadline) as scope:
                await self.step.run()
            self.cancelled = scope.cancelled_caught
        except Exception as exc:
            self.failure = exc
        finally:
            self.ended = trio.current_time()
            self.done.set()

    def outcome(self, deadline: float, now: float) -> StepOutcome:
        phase, step = self.phase.name, self.step.name
        if self.ended is None:
            return StepOutcome(
                phase=phase,
                step=step,
                status=StepStatus.ABANDONED,
                elapsed=now - self.started,
                reason=f"still running {now - deadline:.2f}s after its {self.phase.timeout:g}s "
                "timeout was cancelled; left running",
            )
        elapsed = self.ended - self.started
        failure = self.failure
        if isinstance(failure, RanOver):
            status, reason = StepStatus.RAN_OVER, str(failure) or "ran over"
        elif self.cancelled or self.ended >= deadline:
            status = StepStatus.RAN_OVER
            reason = f"cancelled at its phase's {self.phase.timeout:g}s timeout"
        elif failure is not None:
            status, reason = StepStatus.FAILED, f"{type(failure).__name__}: {failure}"
        else:
            status, reason = StepStatus.DONE, ""
        return StepOutcome(phase=phase, step=step, status=status, elapsed=elapsed, reason=reason)


async def run_phase(phase: Phase, nursery: trio.Nursery, grace: float = 1.0) -> PhaseOutcome:
    """Run one phase's steps concurrently in ``nursery``; see the module docstring."""
    started = trio.current_time()
    deadline = started + phase.timeout
    runs = [_Run(step, phase) for step in phase.steps]
    for run in runs:
        nursery.start_soon(run, deadline, name=f"shutdown {phase.name}/{run.step.name}")
    with trio.move_on_at(deadline + grace):  # the steps end by the deadline, or are cancelled
        for run in runs:
            await run.done.wait()
    now = trio.current_time()
    return PhaseOutcome(
        name=phase.name,
        timeout=phase.timeout,
        elapsed=now - started,
        steps=tuple(run.outcome(deadline, now) for run in runs),
    )


async def run_phases(
    phases: Sequence[Phase],
    nursery: trio.Nursery,
    *,
    grace: float = 1.0,
    progress: Callable[[PhaseOutcome], object] | None = None,
) -> ShutdownReport:
    """Run ``phases`` in order (see the module docstring) and report how each step ended.

    ``nursery`` holds the steps' tasks: an abandoned step lingers there. ``progress``
    is called after each phase with its outcome.
    """
    names = [phase.name for phase in phases]
    for name in names:
        if names.count(name) > 1:
            raise SpecError(f"two shutdown phases are named {name!r}")
    done: list[PhaseOutcome] = []
    for phase in phases:
        outcome = await run_phase(phase, nursery, grace)
        done.append(outcome)
        if progress is not None:
            progress(outcome)
    return ShutdownReport(tuple(done))
