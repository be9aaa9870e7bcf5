"""The subagent supervisor's records: its batches, their children, and what is told of them.

``BatchRecord`` and ``ChildRecord`` are the supervisor's own mutable state (one
actor owns them; nothing else writes them). ``task_result`` and ``child_info``
turn a record into what the supervisor reports: the ``TaskResult`` of an ended
task and the ``SubagentInfo`` line of a listing. They are pure, so the rules
of a report live here rather than among the supervisor's message handling.
"""

from __future__ import annotations

import logging
from pathlib import Path

import attrs
import trio

from actors import ActorRef, MonitorRef, Reply
from hermes.session import TurnEnd
from hermes.store import StoreClient, StoreError

from .gate import Ticket
from .messages import SubagentInfo
from .outcome import RunOutcome
from .progress import Progress
from .results import TaskResult, TaskStatus, cap_summary
from .tasks import TaskSpec
from .verdicts import task_verdict

log = logging.getLogger(__name__)


class Activity:
    """What the owning session reads of its subagent supervisor without a call.

    A published snapshot: written only by the supervisor (whenever its batches
    change), read synchronously by the session after its turn is gone, so a
    cancel with no batch running skips the ``Cancel`` round trip. A batch is
    counted before the supervisor's first ``await`` in handling it, and a
    ``Delegate`` still in the mailbox whose caller went away starts nothing.
    """

    __slots__ = ("batches",)

    def __init__(self) -> None:
        self.batches = 0
        """Delegations with a task queued or running."""

    def idle(self) -> bool:
        """True while a hard stop would find nothing to stop."""
        return self.batches == 0


@attrs.define(eq=False, slots=True, kw_only=True)
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


@attrs.define(eq=False, slots=True, kw_only=True)
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
    driver: ActorRef | None = None
    """The child's driver task (a child of the supervisor's ``DynamicSupervisor``)."""
    monitor: MonitorRef | None = None
    """The supervisor's monitor of ``driver``: its ``Down`` backs up a lost ``ChildEnded``."""
    session: ActorRef | None = None
    """The child session, once its driver said it is up (``SessionUp``)."""
    stop_requested: str | None = None
    """A soft stop came before the session was up: the driver is told so when it is."""
    outcome: RunOutcome | None = None
    """What the driver reported (``ChildEnded``)."""
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
    end = outcome.end if outcome is not None and status is TaskStatus.COMPLETED else None
    schema_valid = None
    if end is TurnEnd.COMPLETED and outcome is not None and child.task.output_schema is not None:
        schema_valid = outcome.output_error is None
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
        schema_valid=schema_valid,
        truncated=end is TurnEnd.MAX_ITERATIONS,
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


async def settle(child: ChildRecord, now: float, spill: Path) -> TaskResult:
    """The result of an ended task: the supervisor's verdict or the one of its outcome,
    with the summary capped (the full text saved to ``spill`` when cut)."""
    outcome = child.outcome
    if child.verdict is not None:
        status, detail = child.verdict
    else:
        status, detail = task_verdict(outcome, has_schema=child.task.output_schema is not None)
    text = outcome.text if outcome is not None else ""
    try:
        summary, path = await cap_summary(text, child.batch.cap, spill)
    except OSError as error:
        summary, path = text[: child.batch.cap], None
        detail = f"{detail}; the full summary could not be saved: {error}".lstrip("; ")
    return task_result(child, outcome, status, detail, summary, path, now)


async def mark_ended(store: StoreClient, children: list[ChildRecord], timeout: float) -> None:
    """Children whose sessions were killed, not closed: mark those ended in the store, one
    request per verdict (a mass cancel is one transaction, not one per child)."""
    by_reason: dict[str, list[str]] = {}
    for child in children:
        session_id = child.progress.session_id
        if session_id is not None:
            verdict = child.verdict[0].value if child.verdict is not None else "stopped"
            by_reason.setdefault(f"subagent {verdict}", []).append(session_id)
    with trio.move_on_after(timeout):
        for reason, session_ids in by_reason.items():
            try:
                await store.end_sessions(session_ids, reason)
            except StoreError as error:
                log.debug("subagents: %d sessions not marked ended: %s", len(session_ids), error)
