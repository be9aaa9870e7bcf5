"""``SubagentSupervisor``: one per session that may delegate; owns its child subtrees.

    session-<id> (SessionActor)
    |-- processes
    |-- subagents (SubagentSupervisor)    this module: admission, liveness, results
    |   |-- sa-1-1a2b3c4d (SessionActor)  a child, depth + 1, driven by a task
    |   `-- sa-2-5e6f7a8b ...             of the supervisor (``driver.py``)
    `-- turn-<n>

- **Delegate** (from the ``delegate_task`` tool): the batch goes through the
  daemon-wide ``SpawnGate``; admitted tasks start their drivers at once, the
  others wait (``SubagentQueued`` with their position) and start in order.
  Inline batches are answered when every task has ended; background ones at
  once with their id, then their result travels to the parent session's
  mailbox as ``MachineInput`` (recorded in the store first).
- **Liveness**: every ``check_interval`` the supervisor reads each child's
  ``Progress``; silent for longer than ``stale_between_tools`` (or
  ``stale_in_tool`` while a tool runs) the child is killed and the task
  ends ``stalled`` with its last activity; past ``child_timeout``,
  ``timed_out``.
- **Stop and steer**: a soft ``Interrupt`` (forwarded by the session) goes to
  every running child and stops the queued ones; ``Cancel`` kills every
  child at once and answers when all are gone; one child is listed, steered
  or stopped by id (the owning session forwards those verbs). A task admitted
  after its batch was stopped never starts.
"""

from __future__ import annotations

import logging
import secrets
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

from actors import (
    Actor,
    ActorExited,
    CallTimeout,
    Exit,
    ExitReason,
    MailboxConfig,
    MailboxFull,
    NotRunning,
    Overflow,
    TaskEnded,
    Timer,
    kill_all,
)
from hermes.session import (
    Cancel,
    ChildOwner,
    Interrupt,
    ListSubagents,
    MachineInput,
    Refused,
    Steer,
    SteerSubagent,
    StopSubagent,
)
from hermes.session import events as session_events
from hermes.store import StoreError

from . import events as ev
from .child import (
    child_config,
    child_deps,
    child_registry,
    first_prompt,
    handoff_target,
    may_orchestrate,
)
from .driver import ChildDriver, ChildPlan, RunOutcome
from .errors import AtCapacity, DelegationError, UnknownSubagent
from .gate import ParentSlots, Ticket
from .ledger import BatchRecord, ChildRecord, child_info, task_result
from .messages import Abandon, Admitted, Check, Delegate, SubagentInfo
from .progress import Progress
from .results import (
    BatchResult,
    DelegationStarted,
    TaskResult,
    TaskStatus,
    cap_summary,
    format_batch,
    summary_cap,
)
from .service import spawn_checks
from .verdicts import liveness_verdict, task_verdict

if TYPE_CHECKING:  # runtime.py imports this module
    from .runtime import SubagentRuntime

log = logging.getLogger(__name__)

STEER_TIMEOUT = 5.0
LOST_TEXT = (
    "[Background delegation {id} was lost: the daemon stopped while it ran, and its "
    "subagents with it. Goals: {goals}. Nothing of their work was reported; run them again "
    "if they are still needed.]"
)


class SubagentSupervisor(Actor):
    """Owns one session's children; see the module docstring."""

    trap_exits = True
    stop_children_concurrently = True
    mailbox = MailboxConfig(capacity=4096, overflow=Overflow.FAIL)
    shutdown_budget = 10.0

    def __init__(self, runtime: SubagentRuntime, owner: ChildOwner, depth: int) -> None:
        self.runtime = runtime
        self.config = runtime.config
        self.owner = owner
        self.depth = depth
        self.slots = ParentSlots(self.config.max_concurrent_children)
        self._batches: dict[str, BatchRecord] = {}
        self._children: dict[str, ChildRecord] = {}
        self._finished: deque[str] = deque()
        self._admitted: list[ChildRecord] = []
        self._admit_pending = False
        self._undelivered: list[MachineInput] = []
        self._timer: Timer | None = None
        self._numbers = 0
        self._in_hand = False

    # -- lifecycle -------------------------------------------------------------------

    async def on_start(self) -> None:
        self._timer = self.ctx.send_interval(self.config.check_interval, Check())
        await self._recover()

    async def _recover(self) -> None:
        """Deliver background results a previous daemon finished but never delivered;
        report the ones it was running as lost (their children died with it)."""
        store = self.owner.deps.store
        try:
            pending = await store.list_delegations(self.owner.session_id, pending_only=True)
        except StoreError as error:
            log.warning("subagents of %s: recovery failed: %s", self.owner.session_id, error)
            return
        for record in pending:
            text = record.result
            if record.status == "running":
                text = LOST_TEXT.format(id=record.id, goals=record.goals)
                try:
                    await store.record_delegation_finish(record.id, text)
                except StoreError as error:
                    log.warning("subagents: could not mark %s lost: %s", record.id, error)
            if text is not None:
                self._deliver(record.id, text)

    async def on_stop(self, reason: ExitReason) -> None:
        # No await needed: free the daemon-wide slots and forget the ids at once.
        for child in self._children.values():
            self.runtime.gate.release(child.ticket)
            self.runtime.forget(child.id)

    def idle(self) -> bool:
        """Nothing a hard stop could stop: no batch, no message in hand or waiting.

        Read by the owning session after its turn is gone, so it can skip the
        ``Cancel`` round trip (two scheduler passes of every cancel's latency).
        """
        return not self._batches and not self._in_hand and self.ctx.mailbox_depth == 0

    # -- the mailbox -----------------------------------------------------------------

    async def receive(self, message: object) -> object:
        self._in_hand = True
        try:
            return await self._receive(message)
        finally:
            self._in_hand = False

    async def _receive(self, message: object) -> object:
        if isinstance(message, TaskEnded):
            child = self._children.get(message.task.name)  # a driver is named by its child
            if child is not None and child.driving is message.task:
                await self._finish(child)  # once: a child already finished is left alone
            return None
        if isinstance(message, Exit):
            return None  # a child session's end: its driver's TaskEnded carries it
        if isinstance(message, Admitted):
            await self._start_admitted()
            return None
        if isinstance(message, Check):
            await self._check()
            return None
        if isinstance(message, Abandon):
            await self._stop_batch(message.delegation_id, message.reason)
            return None
        if isinstance(message, Interrupt):
            await self._soft_stop(message.reason)
            return None
        try:
            return await self._handle(message)
        except DelegationError as error:
            return Refused(error)

    async def _handle(self, message: object) -> object:
        if isinstance(message, Delegate):
            return await self._delegate(message)
        if isinstance(message, Cancel):
            await self._hard_stop(message.reason)
            return None
        if isinstance(message, ListSubagents):
            return self._list()
        if isinstance(message, SteerSubagent):
            return await self._steer(message.subagent_id, message.text)
        if isinstance(message, StopSubagent):
            return await self._stop_one(message.subagent_id, message.reason)
        raise DelegationError(f"the subagent supervisor does not handle {type(message).__name__}")

    # -- delegation ------------------------------------------------------------------

    async def _delegate(self, request: Delegate) -> object:
        spawn_checks(self.runtime.gate, self.config, self.depth)
        config = self.config
        if request.background:
            running = sum(1 for b in self._batches.values() if b.background)
            if running >= config.max_background:
                raise AtCapacity(
                    f"{running} background delegations are already running (the limit is "
                    f"{config.max_background}). Nothing was started; wait for one to report."
                )
        if request.delegation_id in self._batches:
            raise DelegationError(f"delegation {request.delegation_id} already exists")
        now = trio.current_time()
        cap = summary_cap(config, self.owner.remaining_context(), len(request.tasks))
        batch = BatchRecord(request.delegation_id, request.background, cap, now)
        for task in request.tasks:
            self._numbers += 1
            child_id = f"sa-{self._numbers}-{secrets.token_hex(4)}"
            ticket = Ticket(child_id, self.slots, self._on_admit)
            progress = Progress(self._progress_notifier(child_id))
            batch.children.append(ChildRecord(child_id, task, batch, ticket, progress, now))
        queued = self.runtime.gate.submit([c.ticket for c in batch.children])  # may refuse
        batch.remaining = len(batch.children)
        self._batches[batch.id] = batch
        for child in batch.children:
            self._children[child.id] = child
            self.runtime.remember(child.id, self.ctx.self)
        if not request.background:
            batch.reply = self.ctx.defer_reply()
        hub = self.owner.hub
        for child in batch.children:
            if child.ticket.admitted:
                await self._start(child)
            else:
                position = self.runtime.gate.position(child.ticket)
                hub.publish(ev.SubagentQueued(batch.id, child.id, child.task.goal, position))
        if request.background:
            await self._record_start(batch)
            return DelegationStarted(batch.id, tuple(c.id for c in batch.children), len(queued))
        return None

    async def _record_start(self, batch: BatchRecord) -> None:
        goals = "; ".join(c.task.goal for c in batch.children)
        try:
            await self.owner.deps.store.record_delegation_start(
                batch.id, self.owner.session_id, goals
            )
        except StoreError as error:
            log.warning("subagents: background delegation %s not recorded: %s", batch.id, error)

    def _progress_notifier(self, child_id: str) -> Callable[[Progress], None]:
        hub = self.owner.hub

        def notify(progress: Progress) -> None:
            hub.publish(
                ev.SubagentProgress(
                    child_id, progress.iteration, progress.current_tool, progress.activity
                )
            )

        return notify

    # -- admission and start -----------------------------------------------------------

    def _on_admit(self, ticket: Ticket) -> bool:
        """The gate admitted one of our queued tickets (called from any actor's task)."""
        child = self._children.get(ticket.key)
        if child is None or child.state != "queued":
            return False
        self._admitted.append(child)
        if not self._admit_pending:
            try:
                self.ctx.self.cast_nowait(Admitted(child.id))
                self._admit_pending = True
            except MailboxFull:
                pass  # the next Check starts it
        return True

    async def _start_admitted(self) -> None:
        self._admit_pending = False
        admitted, self._admitted = self._admitted, []
        for child in admitted:
            if child.state == "queued":
                await self._start(child)

    async def _start(self, child: ChildRecord) -> None:
        batch = child.batch
        now = trio.current_time()
        if batch.stopped is not None:  # admitted after a stop: never runs
            child.verdict = (TaskStatus.INTERRUPTED, f"not started: {batch.stopped}")
            await self._finish(child)
            return
        owner = self.owner
        child_depth = self.depth + 1
        orchestrate = may_orchestrate(self.config, child.task, child_depth)
        registry = child_registry(
            owner.deps.registry, child.task, self.config.blocked_tools, orchestrate
        )
        host = self.runtime.host(child_depth) if orchestrate else None
        plan = ChildPlan(
            subagent_id=child.id,
            parent_session_id=owner.session_id,
            task=child.task,
            config=child_config(owner.config, self.config, child.id, child.task),
            deps=child_deps(owner.deps, registry, host, handoff_target(owner, child.progress)),
            host=host,
            prompt=first_prompt(child.task),
            schema_retries=self.config.schema_retries,
            close_timeout=self.config.close_timeout,
        )
        driver = ChildDriver(plan, child.progress)
        child.driver = driver
        child.state = "running"
        child.started_at = now
        child.progress.touch("starting")
        try:
            child.driving = self.ctx.start_task(
                lambda: driver.run(self.ctx), name=child.id, notify=True
            )
        except NotRunning as error:  # we are stopping: this task's failure, not ours
            child.verdict = (TaskStatus.FAILED, f"the child did not start: {error}")
            await self._finish(child)
            return
        waited = now - child.queued_at if child.ticket.queued_at is not None else 0.0
        owner.hub.publish(ev.SubagentStarted(batch.id, child.id, child.task.goal, waited))

    # -- ends --------------------------------------------------------------------------

    def _status(self, child: ChildRecord, outcome: RunOutcome | None) -> tuple[TaskStatus, str]:
        if child.verdict is not None:
            return child.verdict
        has_schema = child.task.output_schema is not None
        return task_verdict(outcome, has_schema=has_schema)

    async def _finish(self, child: ChildRecord) -> None:
        """Record a task's end (once), free its slot, and complete its batch if it was last."""
        if child.state == "done":
            return
        child.state = "done"
        self.runtime.gate.release(child.ticket)
        now = trio.current_time()
        child.ended_at = now
        driver = child.driver
        outcome = driver.outcome if driver is not None else None
        status, detail = self._status(child, outcome)
        text = outcome.text if outcome is not None else ""
        spill = self.owner.config.spill_dir / "delegation" / f"{child.id}.txt"
        try:
            summary, path = await cap_summary(text, child.batch.cap, spill)
        except OSError as error:
            summary, path = text[: child.batch.cap], None
            detail = f"{detail}; the full summary could not be saved: {error}".lstrip("; ")
        result = task_result(child, outcome, status, detail, summary, path, now)
        child.result = result
        self.owner.hub.publish(
            ev.SubagentFinished(
                child.batch.id,
                child.id,
                status.value,
                detail,
                result.duration,
                len(summary),
                result.usage,
            )
        )
        self._remember_finished(child)
        batch = child.batch
        batch.remaining -= 1
        if batch.remaining == 0:
            await self._complete(batch)

    def _remember_finished(self, child: ChildRecord) -> None:
        self.runtime.forget(child.id)
        self._finished.append(child.id)
        while len(self._finished) > self.config.finished_kept:
            old = self._finished.popleft()
            self._children.pop(old, None)

    async def _complete(self, batch: BatchRecord) -> None:
        self._batches.pop(batch.id, None)
        results = tuple(c.result for c in batch.children if c.result is not None)
        done = BatchResult(
            delegation_id=batch.id,
            background=batch.background,
            results=results,
            duration=trio.current_time() - batch.started_at,
        )
        self.owner.hub.publish(
            ev.DelegationCompleted(batch.id, batch.background, done.statuses, done.duration)
        )
        if not batch.background:
            if batch.reply is not None:
                batch.reply.send(done)
            return
        text = format_batch(done)
        store = self.owner.deps.store
        try:
            await store.record_delegation_finish(batch.id, text)
            if batch.hard_stopped:  # the owner stopped everything: no new turn for it
                await store.record_delegation_delivered(batch.id)
        except StoreError as error:
            log.warning("subagents: result of %s not recorded: %s", batch.id, error)
        if not batch.hard_stopped:
            self._deliver(batch.id, text)

    def _deliver(self, delegation_id: str, text: str) -> None:
        """Push a background result into the owner's mailbox (retried on the next check)."""
        store = self.owner.deps.store

        async def delivered() -> None:
            await store.record_delegation_delivered(delegation_id)

        notice = session_events.InputNoticed("subagents", delegation_id, text)
        self._undelivered.append(MachineInput("subagents", text, notice, delivered))
        self._flush_deliveries()

    def _flush_deliveries(self) -> None:
        parent = self.ctx.parent
        while self._undelivered and parent is not None:
            try:
                parent.cast_nowait(self._undelivered[0])
            except MailboxFull:
                return
            self._undelivered.pop(0)

    # -- liveness ----------------------------------------------------------------------

    async def _check(self) -> None:
        self._flush_deliveries()
        if self._admitted:
            await self._start_admitted()
        now = trio.current_time()
        doomed: list[ChildRecord] = []
        for child in self._children.values():
            if child.state != "running" or child.verdict is not None:
                continue
            verdict = liveness_verdict(child.progress, child.started_at, now, self.config)
            if verdict is not None:
                child.verdict = verdict
                doomed.append(child)
        if doomed:
            await self._kill(doomed, "the subagent supervisor")

    async def _kill(self, children: list[ChildRecord], why: str) -> None:
        """Stop the drivers of ``children`` and kill their sessions, all at once."""
        reason = ExitReason.cancelled(by=self.ctx.path, detail=why)
        sessions = []
        for child in children:
            if child.driving is not None:
                child.driving.cancel()
            # Its own name: a session whose spawn was under way is found too.
            session = self.ctx.child(child.id)
            if session is not None:
                sessions.append(session)
        await kill_all(sessions, reason)
        await self._end_killed(children)
        for child in children:
            await self._finish(child)

    async def _end_killed(self, children: list[ChildRecord]) -> None:
        """Killed children never closed their sessions: mark them ended in the store,
        one request per verdict (a mass cancel is one transaction, not one per child)."""
        by_reason: dict[str, list[str]] = {}
        for child in children:
            session_id = child.progress.session_id
            if session_id is not None:
                verdict = child.verdict[0].value if child.verdict is not None else "stopped"
                by_reason.setdefault(f"subagent {verdict}", []).append(session_id)
        store = self.owner.deps.store
        with trio.move_on_after(self.owner.config.store_timeout):
            for reason, session_ids in by_reason.items():
                try:
                    await store.end_sessions(session_ids, reason)
                except StoreError as error:
                    count = len(session_ids)
                    log.debug("subagents: %d sessions not marked ended: %s", count, error)

    # -- stop and steer ----------------------------------------------------------------

    async def _soft_stop(self, reason: str) -> None:
        """Forward a soft interrupt: running children are interrupted, queued ones end."""
        queued: list[ChildRecord] = []
        for batch in self._batches.values():
            batch.stopped = reason
        for child in list(self._children.values()):
            if child.state == "queued":
                queued.append(child)
            elif child.state == "running" and child.driver is not None:
                child.driver.stop_requested = reason
                session = child.driver.session
                if session is not None:
                    try:
                        session.cast_nowait(Interrupt(reason))
                    except MailboxFull:
                        log.warning("subagent %s: mailbox full, interrupt lost", child.id)
        for child in queued:
            self.runtime.gate.withdraw(child.ticket)
            child.verdict = (TaskStatus.INTERRUPTED, f"not started: {reason}")
            await self._finish(child)

    async def _hard_stop(self, reason: str) -> None:
        """Kill every child at once; return when all are gone."""
        for batch in self._batches.values():
            batch.stopped = reason
            batch.hard_stopped = True
        await self._stop_children(list(self._children.values()), reason)

    async def _stop_children(self, children: list[ChildRecord], reason: str) -> None:
        running: list[ChildRecord] = []
        for child in children:
            if child.state == "done":
                continue
            child.verdict = child.verdict or (TaskStatus.INTERRUPTED, reason)
            if child.state == "queued":
                self.runtime.gate.withdraw(child.ticket)
                await self._finish(child)
            else:
                running.append(child)
        if running:
            await self._kill(running, reason)

    async def _stop_batch(self, delegation_id: str, reason: str) -> None:
        batch = self._batches.get(delegation_id)
        if batch is not None:
            batch.stopped = reason
            await self._stop_children(list(batch.children), reason)

    def _child(self, subagent_id: str) -> ChildRecord:
        child = self._children.get(subagent_id)
        if child is None:
            known = ", ".join(self._children) or "none"
            raise UnknownSubagent(
                f"no subagent {subagent_id!r} belongs to session {self.owner.session_id} "
                f"(its subagents: {known})"
            )
        return child

    async def _stop_one(self, subagent_id: str, reason: str) -> TaskResult:
        child = self._child(subagent_id)
        if child.state != "done":
            await self._stop_children([child], reason)
        assert child.result is not None
        return child.result

    async def _steer(self, subagent_id: str, text: str) -> object:
        child = self._child(subagent_id)
        session = child.driver.session if child.driver is not None else None
        if child.state != "running" or session is None:
            state = child.state if child.state != "done" else "finished"
            raise DelegationError(f"subagent {subagent_id} is {state}: it cannot be steered")
        try:
            return await session.call(Steer(text), timeout=STEER_TIMEOUT)
        except (ActorExited, CallTimeout) as error:
            raise DelegationError(
                f"subagent {subagent_id} did not take the steer: {error}"
            ) from error

    def _list(self) -> list[SubagentInfo]:
        now = trio.current_time()
        position = self.runtime.gate.position
        return [child_info(c, now, position(c.ticket)) for c in self._children.values()]
