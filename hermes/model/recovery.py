"""Auto-recovery cycles: when a call's retries and fallbacks are spent (seed #159).

``complete_recovering`` wraps ``ModelClient.complete``. When the call fails
with an overloaded, server-error or timeout verdict the server did not mark
final (``x-should-retry: false``), and the caller says it may park (no answer
text has reached the user), it waits and calls again:
15, 30, then 60 s (jittered by 10 %; a provider's Retry-After, up to 120 s,
wins), at most ``cycles`` times (5 by default; 0 ends at the first failure).
Each wait is announced through ``on_wait`` before it starts; the wait is
plain ``trio.sleep``, so cancelling the caller's scope ends it at once. After
the last cycle the error is raised with a status line saying so.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import attrs
import trio

from hermes.checks import count, durations

from .client import EventSink, ModelClient
from .errors import FailureReason, ModelError
from .types import ModelRequest, ModelResponse

RECOVERABLE = frozenset(
    {FailureReason.OVERLOADED, FailureReason.SERVER_ERROR, FailureReason.TIMEOUT}
)


LABEL = "recovery policy"


@attrs.frozen(slots=True)
class RecoveryPolicy:
    """How often and how long a turn parks before calling a failing provider again."""

    cycles: int = attrs.field(default=5, validator=count(LABEL, 0))
    waits: tuple[float, ...] = attrs.field(
        default=(15.0, 30.0, 60.0), converter=tuple, validator=durations(LABEL)
    )
    """Wait before cycle 1, 2, 3...; the last repeats."""
    retry_after_cap: float = 120.0
    jitter: float = 0.1

    def delay(
        self, cycle: int, retry_after: float | None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before ``cycle`` (0-based)."""
        if retry_after is not None:
            return min(retry_after, self.retry_after_cap)
        base = self.waits[min(cycle, len(self.waits) - 1)]
        return float(base * (1 + self.jitter * (2 * (rng or random).random() - 1)))


@attrs.frozen(slots=True)
class RecoveryWait:
    """A call is parked: cycle ``cycle`` of ``cycles`` starts after ``delay`` seconds."""

    cycle: int
    cycles: int
    delay: float
    reason: str


async def complete_recovering(
    client: ModelClient,
    request: ModelRequest,
    sink: EventSink,
    policy: RecoveryPolicy,
    *,
    may_park: Callable[[], bool],
    on_wait: Callable[[RecoveryWait], None],
) -> ModelResponse:
    """``client.complete``, called again after each wait of ``policy`` (module docstring)."""
    cycle = 0
    while True:
        try:
            return await client.complete(request, sink)
        except ModelError as error:
            if error.reason not in RECOVERABLE or error.hints.final or not may_park():
                raise
            if cycle >= policy.cycles:
                if policy.cycles == 0:
                    raise
                raise ModelError(
                    error.reason,
                    f"{error.message} (gave up after {policy.cycles} auto-recovery cycles)",
                    hints=error.hints,
                    status=error.status,
                    request_id=error.request_id,
                    model=error.model,
                ) from error
            delay = policy.delay(cycle, error.hints.retry_after)
            cycle += 1
            on_wait(RecoveryWait(cycle, policy.cycles, delay, error.reason.value))
            await trio.sleep(delay)
