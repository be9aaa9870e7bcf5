"""How a child's task ended, and whether a running child is stale: pure decisions.

The supervisor records the verdicts; deciding them needs no actor, so the
rules live here, each a function of what the supervisor knows.
"""

from __future__ import annotations

from hermes.session import TurnEnd

from .config import SubagentConfig
from .driver import RunOutcome
from .progress import Progress
from .results import TaskStatus

Verdict = tuple[TaskStatus, str]
"""A task's status and a line saying why."""


def task_verdict(outcome: RunOutcome | None, *, has_schema: bool) -> Verdict:
    """The status of a task whose driver reported ``outcome`` (None: it reported nothing).

    As Hermes does (seeds #248, #249): a child that answered is ``completed`` even when
    its output still missed the schema after the retry (``TaskResult.schema_valid`` is
    false) or it hit its step cap (``TaskResult.truncated``); ``detail`` says which."""
    if outcome is None or outcome.end is None:
        detail = outcome.detail if outcome is not None else ""
        return TaskStatus.FAILED, detail or "the child ended before it ran"
    end = outcome.end
    if end in (TurnEnd.COMPLETED, TurnEnd.MAX_ITERATIONS):
        if not outcome.text.strip():
            return TaskStatus.FAILED, "it finished without a summary"
        if end is TurnEnd.MAX_ITERATIONS:
            note = outcome.detail or "it reached its step cap"
            return TaskStatus.COMPLETED, f"truncated: {note}; its summary may be partial"
        if has_schema and outcome.output_error is not None:
            return (
                TaskStatus.COMPLETED,
                f"schema_valid: false, its output still did not fit the schema after the "
                f"retry: {outcome.output_error}; the raw text is the summary",
            )
        return TaskStatus.COMPLETED, ""
    if end in (TurnEnd.INTERRUPTED, TurnEnd.CANCELLED, TurnEnd.ROLLED_BACK):
        return TaskStatus.INTERRUPTED, outcome.detail
    return TaskStatus.FAILED, outcome.detail or end.value


def liveness_verdict(
    progress: Progress, started_at: float | None, now: float, config: SubagentConfig
) -> Verdict | None:
    """Stalled (no progress for too long) or timed out (over its wall-clock cap), or None."""
    silent = now - progress.last_progress
    limit = config.stale_in_tool if progress.in_tool else config.stale_between_tools
    if silent > limit:
        where = f"inside {progress.current_tool}" if progress.in_tool else "between tools"
        return (
            TaskStatus.STALLED,
            f"no progress for {silent:.1f}s {where} (limit {limit:g}s); "
            f"last activity: {progress.activity}",
        )
    cap = config.child_timeout
    if cap is not None and started_at is not None and now - started_at > cap:
        return (
            TaskStatus.TIMED_OUT,
            f"over its wall-clock cap of {cap:g}s; last activity: {progress.activity}",
        )
    return None
