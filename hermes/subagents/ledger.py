"""The subagent supervisor's records: its batches, their children, and what is told of them.

``BatchRecord`` and ``ChildRecord`` are the supervisor's own mutable state (one
actor owns them; nothing else writes them). ``task_result`` and ``child_info``
turn a record into what the supervisor reports: the ``TaskResult`` of an ended
task and the ``SubagentInfo`` line of a listing. They are pure, so the rules
of a report live here rather than among the supervisor's message handling.
"""

from __future__ import annotations

import attrs

from actors import OwnedTask, Reply

from .driver import ChildDriver, RunOutcome
from .gate import Ticket
from .messages import SubagentInfo
from .progress import Progress
from .results import TaskResult, TaskStatus
from .tasks import TaskSpec


@attrs.define(eq=False, slots=True)
class BatchRecord:
    """One ``delegate_task`` call: its children and how it is to be answered."""

    id: str
    background: bool
    cap: int
    """Characters each child's summary is capped at."""
    started_at: float
    children: list[ChildRecord] = attrs.field(factory=list)
    reply: Reply | None = None
    """The inline caller's deferred reply (None for a background batch)."""
    remaining: int = 0
    stopped: str | None = None
    """A stop was requested: tasks not yet started never will."""
    hard_stopped: bool = False
    """Stopped by a hard cancel of the owner: its result is recorded, not delivered as input."""


@attrs.define(eq=False, slots=True)
class ChildRecord:
    """One task of a batch, from queued to done."""

    id: str
    task: TaskSpec
    batch: BatchRecord
    ticket: Ticket
    progress: Progress
    queued_at: float
    state: str = "queued"
    """queued, running or done."""
    started_at: float | None = None
    driver: ChildDriver | None = None
    driving: OwnedTask | None = None
    """The supervisor's task running ``driver``."""
    verdict: tuple[TaskStatus, str] | None = None
    """Set by the supervisor before it stops the child: why the task ended."""
    result: TaskResult | None = None
    ended_at: float | None = None


def task_result(
    child: ChildRecord,
    outcome: RunOutcome | None,
    status: TaskStatus,
    detail: str,
    summary: str,
    full_text_path: str | None,
    now: float,
) -> TaskResult:
    """What an ended task reports: its status, capped summary, usage, trace and timing."""
    progress = child.progress
    usage = outcome.usage if outcome is not None else None
    return TaskResult(
        subagent_id=child.id,
        goal=child.task.goal,
        status=status,
        summary=summary,
        detail=detail,
        session_id=progress.session_id,
        duration=now - child.started_at if child.started_at is not None else 0.0,
        iterations=outcome.iterations if outcome is not None else 0,
        tool_trace=tuple(progress.trace),
        tool_calls=progress.tool_calls,
        handed_over=tuple(progress.handed_over),
        output=outcome.output if outcome is not None else None,
        full_text_path=full_text_path,
        **({"usage": usage} if usage is not None else {}),
    )


def child_info(child: ChildRecord, now: float, queue_position: int) -> SubagentInfo:
    """A child's line in ``ListSubagents``: its state, progress and age."""
    progress = child.progress
    if child.state == "queued":
        state, age = "queued", now - child.queued_at
    elif child.state == "running":
        state, age = "running", now - (child.started_at or now)
    else:
        assert child.result is not None
        state, age = child.result.status.value, child.result.duration
    return SubagentInfo(
        subagent_id=child.id,
        delegation_id=child.batch.id,
        goal=child.task.goal,
        state=state,
        background=child.batch.background,
        session_id=progress.session_id,
        iteration=progress.iteration,
        current_tool=progress.current_tool,
        activity=progress.activity,
        age=age,
        queue_position=queue_position,
        detail=child.result.detail if child.result is not None else "",
    )
