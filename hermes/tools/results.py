"""Results of a batch, one per call, in call order, even when the batch is cancelled.

``BatchCollector`` is the mutable collector the caller owns. ``run_batch``
fills it as calls finish; whatever happens to the batch (normal end, soft
interrupt, cancellation), ``collector.results()`` afterwards gives exactly one
``ToolResult`` per call: finished calls keep their result, a call that was
running gets a *cancelled* result, a call that never started a *skipped* one.

The pattern, for a turn that must keep its history valid::

    collector = BatchCollector(calls)
    try:
        await run_batch(calls, registry, ctx, collector=collector)
    finally:
        blocks = [r.to_block() for r in collector.results()]
        ...  # append to the transcript / persist (shielded, time-bounded)

``run_batch`` re-raises the cancellation; the ``finally`` still sees a complete,
ordered set of results.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from hermes.model.types import ToolResultBlock

from .base import ToolCall, ToolOutcome


class CallStatus(enum.Enum):
    OK = "ok"
    """Ran and succeeded."""
    ERROR = "error"
    """Ran and reported an error (missing file, non-zero exit...)."""
    INVALID = "invalid"
    """Did not run: unknown tool or arguments that do not fit the schema."""
    TIMEOUT = "timeout"
    """Stopped at its deadline."""
    CANCELLED = "cancelled"
    """Was running when the batch was cancelled; it may have partly completed."""
    SKIPPED = "skipped"
    """Never started (batch cancelled or turn interrupted first)."""


@attrs.frozen(slots=True)
class ToolResult:
    """The single result of one tool call."""

    call: ToolCall
    outcome: ToolOutcome
    status: CallStatus
    duplicate_of: str | None = None
    """Id of the identical earlier call in the batch whose run produced this result."""
    spilled_to: Path | None = None
    """Where the full output was saved when it was too large for the transcript."""

    def to_block(self) -> ToolResultBlock:
        return ToolResultBlock(self.call.id, self.outcome.content, self.outcome.is_error)


class BatchCollector:
    """One slot per call; ``results()`` is always complete and in call order."""

    def __init__(
        self,
        calls: Sequence[ToolCall],
        on_result: Callable[[int, ToolResult], None] | None = None,
    ) -> None:
        self.calls: tuple[ToolCall, ...] = tuple(calls)
        self.on_result = on_result
        """Told of each call's result as it lands (must not block)."""
        self._results: list[ToolResult | None] = [None] * len(self.calls)
        self._started: list[bool] = [False] * len(self.calls)
        self._aliases: dict[int, int] = {}
        self.stop_reason = "the batch was cancelled"
        """Why unfinished calls did not finish; used in their synthetic results."""

    def __len__(self) -> int:
        return len(self.calls)

    def mark_started(self, index: int) -> None:
        self._started[index] = True

    def set(self, index: int, result: ToolResult) -> None:
        self._results[index] = result
        if self.on_result is not None:
            self.on_result(index, result)

    def replace_outcome(self, index: int, outcome: ToolOutcome, spilled_to: Path | None) -> None:
        result = self._results[index]
        if result is not None:
            self._results[index] = attrs.evolve(result, outcome=outcome, spilled_to=spilled_to)

    def alias(self, duplicate: int, primary: int) -> None:
        """Call ``duplicate`` is identical to ``primary`` and gets its result."""
        self._aliases[duplicate] = primary

    def finished(self) -> dict[int, ToolResult]:
        """The results that exist so far (primaries only), by call index."""
        return {i: r for i, r in enumerate(self._results) if r is not None}

    def available(self) -> list[ToolResult]:
        """The results that exist so far, duplicates included, in call order."""
        out: list[ToolResult] = []
        for i, call in enumerate(self.calls):
            primary = self._aliases.get(i)
            result = self._results[i if primary is None else primary]
            if result is None:
                continue
            if primary is not None:
                result = attrs.evolve(result, call=call, duplicate_of=result.call.id)
            out.append(result)
        return out

    @property
    def complete(self) -> bool:
        return all(
            self._results[self._aliases.get(i, i)] is not None for i in range(len(self.calls))
        )

    def results(self) -> list[ToolResult]:
        """Exactly one result per call, in call order; unfinished calls get synthetic ones."""
        own = [self._own(i) for i in range(len(self.calls))]
        out: list[ToolResult] = []
        for i, call in enumerate(self.calls):
            primary = self._aliases.get(i)
            if primary is None:
                out.append(own[i])
            else:
                source = own[primary]
                out.append(attrs.evolve(source, call=call, duplicate_of=source.call.id))
        return out

    def _own(self, index: int) -> ToolResult:
        result = self._results[index]
        if result is not None:
            return result
        call = self.calls[index]
        if self._started[index]:
            text = (
                f"[Tool call cancelled: {call.name} was stopped while running because "
                f"{self.stop_reason}. It may have partly completed; any process it started "
                "was killed.]"
            )
            return ToolResult(call, ToolOutcome.error(text), CallStatus.CANCELLED)
        text = (
            f"[Tool call skipped: {call.name} did not run because {self.stop_reason}. "
            "Nothing was executed.]"
        )
        return ToolResult(call, ToolOutcome.error(text), CallStatus.SKIPPED)
