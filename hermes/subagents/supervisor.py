"""``SubagentSupervisor``: one per session that may delegate; admission on top of a
``DynamicSupervisor`` of the session's children.

    session-<id> (SessionActor)
    |-- processes
    |-- subagents (SubagentSupervisor)      this module: admission, liveness, results
    |   `-- sup (DynamicSupervisor)         template: a driver task, temporary
    |       |-- sa-1-1a2b3c4d (ChildDriver) a Task[RunOutcome] (``driver.py``)
    |       |   `-- session (SessionActor)  the child, depth + 1
    |       `-- sa-2-5e6f7a8b ...
    `-- turn-<n>

- **Delegate** (from the ``delegate_task`` tool): the batch goes through the
  daemon-wide ``SpawnGate``; each admitted task is started from the template
  (``start_child``), the others wait (``SubagentQueued``) and start in order.
  Inline batches are answered when every task has ended, background ones at
  once; their result goes to the parent's mailbox (``deliveries.py``).
- **Results are values**: a driver's outcome arrives as ``ChildEnded`` (or,
  if it could not send one, as the ``Down`` of this supervisor's monitor).
  A child's crash is its task's ``failed`` result; the parent is untouched.
- **Liveness**: every ``check_interval`` each child's ``Progress`` is read;
  silent past ``stale_between_tools`` (``stale_in_tool`` in a tool) the
  child is killed, ``stalled``; past ``child_timeout``, ``timed_out``.
- **Stop and steer**: a soft ``Interrupt`` reaches every running child
  session and ends the queued tasks; ``Cancel`` kills every driver at once
  (each with its session's subtree) and answers when all are gone; one child
  is listed, steered or stopped by id. A task admitted after its batch was
  stopped never starts.
"""

from __future__ import annotations

import logging
import secrets
from collections import deque
from typing import TYPE_CHECKING

import trio

from actors import (
    Actor,
    ActorError,
    ActorExited,
    ActorRef,
    CallTimeout,
    Down,
    ExitReason,
    MailboxConfig,
    MailboxFull,
    Reply,
    Timer,
    kill_all,
)
from hermes.session import (
    Cancel,
    ChildOwner,
    Interrupt,
    ListSubagents,
    Refused,
    Steer,
    SteerSubagent,
    StopSubagent,
)
from supervisors import DynamicSupervisor, Restart, SupervisorClient, task_spec

from . import events as ev
from .child import child_plan
from .deliveries import Deliveries
from .driver import ChildDriver
from .errors import AtCapacity, DelegationError, UnknownSubagent
from .gate import ParentSlots, Ticket
from .ledger import Activity, BatchRecord, ChildRecord, child_info, mark_ended, settle
from .messages import (
    Abandon,
    Admitted,
    Check,
    ChildEnded,
    Delegate,
    SessionUp,
    StopBackground,
    SubagentInfo,
)
from .outcome import RunOutcome
from .progress import Progress, hub_notifier
from .results import (
    BatchResult,
    DelegationStarted,
    TaskResult,
    TaskStatus,
    format_batch,
    summary_cap,
)
from .service import spawn_checks
from .verdicts import liveness_verdict

if TYPE_CHECKING:  # runtime.py imports this module
    from .runtime import SubagentRuntime

log = logging.getLogger(__name__)

STEER_TIMEOUT = 5.0
START_TIMEOUT = 30.0
"""Bound on starting one child through the ``DynamicSupervisor``."""
CHILDREN = "sup"
"""The ``DynamicSupervisor``'s name; its children are named by their subagent ids."""


class SubagentSupervisor(Actor):
    """Owns one session's children; see the module docstring."""

    mailbox = MailboxConfig(capacity=4096)  # block: a driver's report waits for room
    shutdown_budget = 10.0

    def __init__(self, runtime: SubagentRuntime, owner: ChildOwner, depth: int) -> None:
        self.runtime = runtime
        self.config = runtime.config
        self.owner = owner
        self.depth = depth
        self.slots = ParentSlots(self.config.max_concurrent_children)
        self.activity = Activity()
        """Published to the owning session (``HostedChildren.idle``); written only here."""
        self.deliveries = Deliveries(owner, held=runtime.gate.stopped)
        self._batches: dict[str, BatchRecord] = {}
        self._children: dict[str, ChildRecord] = {}
        self._finished: deque[str] = deque()
        self._admitted: list[ChildRecord] = []
        self._admit_pending = False
        self._timer: Timer | None = None
        self._sup: SupervisorClient | None = None
        self._numbers = 0

    # -- lifecycle -------------------------------------------------------------------

    async def on_start(self) -> None:
        template = task_spec(
            "sa", ChildDriver, restart=Restart.TEMPORARY, shutdown=self.config.close_timeout
        )
        ref = await self.ctx.spawn(
            DynamicSupervisor(template), name=CHILDREN, shutdown=self.shutdown_budget
        )
        self._sup = SupervisorClient(ref, timeout=START_TIMEOUT)
        self._timer = self.ctx.send_interval(self.config.check_interval, Check())
        await self.deliveries.recover(self.ctx.parent)

    async def on_stop(self, reason: ExitReason) -> None:
        # No await needed: free the daemon-wide slots and forget the ids at once.
        for child in self._children.values():
            self.runtime.gate.release(child.ticket)
            self.runtime.forget(child.id)

    # -- the mailbox -----------------------------------------------------------------

    async def receive(self, message: object) -> object:
        try:
            return await self._dispatch(message)
        except DelegationError as error:
            return Refused(error)

    async def _dispatch(self, message: object) -> object:
        match message:
            case ChildEnded(subagent_id=subagent_id, outcome=outcome, closed=closed):
                await self._ended(subagent_id, outcome, closed)
            case Down(actor=driver, reason=reason):
                await self._driver_down(driver, reason)
            case SessionUp(subagent_id=subagent_id, session=session):
                return self._session_up(subagent_id, session)
            case Admitted():
                await self._start_admitted()
            case Check():
                await self._check()
            case Abandon(delegation_id=delegation_id, reason=reason):
                await self._stop_batch(delegation_id, reason)
            case Interrupt(reason=reason):
                await self._soft_stop(reason)
            case Delegate():
                await self._delegate(message)
            case Cancel(reason=reason):
                await self._hard_stop(reason)
            case ListSubagents():
                return self._list()
            case SteerSubagent(subagent_id=subagent_id, text=text):
                return await self._steer(subagent_id, text)
            case StopSubagent(subagent_id=subagent_id, reason=reason):
                return await self._stop_one(subagent_id, reason)
            case StopBackground(reason=reason):
                return await self._stop_background(reason)
            case _:
                raise DelegationError(
                    f"the subagent supervisor does not handle {type(message).__name__}"
                )
        return None

    # -- delegation ------------------------------------------------------------------

    async def _delegate(self, request: Delegate) -> None:
        """Answered through a deferred reply: inline when the batch ends, background at once."""
        reply = self.ctx.defer_reply() if self.ctx.handling_call else None
        if reply is not None and reply.caller_gave_up:
            return  # its tool call went away while this waited (the turn is gone): start nothing
        try:
            answer: object = await self._open_batch(request, reply)
        except DelegationError as error:
            answer = Refused(error)
        if answer is not None and reply is not None:
            reply.send(answer)

    async def _open_batch(self, request: Delegate, reply: Reply | None) -> object:
        config = self.config
        spawn_checks(self.runtime.gate, config, self.depth)
        background = request.background
        if background:
            running = sum(b.remaining for b in self._batches.values() if b.background)
            fits = running + len(request.tasks) <= config.max_background
            if not fits and request.inline_if_full:
                background = False  # code asked for background: run inline (seed #252)
            elif not fits:
                raise AtCapacity(
                    f"{running} background subagents are already running or waiting and this "
                    f"call has {len(request.tasks)} (the pool holds {config.max_background}). "
                    "Nothing was started; wait for one to report."
                )
        if request.delegation_id in self._batches:
            raise DelegationError(f"delegation {request.delegation_id} already exists")
        now = trio.current_time()
        remaining = max(0, self.owner.config.context_window - request.context_used)
        cap = summary_cap(config, remaining, len(request.tasks))
        batch = BatchRecord(
            id=request.delegation_id, background=background, cap=cap, started_at=now
        )
        for task in request.tasks:
            self._numbers += 1
            child_id = f"sa-{self._numbers}-{secrets.token_hex(4)}"
            batch.children.append(
                ChildRecord(
                    id=child_id,
                    task=task,
                    batch=batch,
                    ticket=Ticket(child_id, self.slots, self._on_admit),
                    progress=Progress(hub_notifier(self.owner.hub, child_id)),
                    queued_at=now,
                )
            )
        queued = self.runtime.gate.submit([c.ticket for c in batch.children])  # may refuse
        batch.remaining = len(batch.children)
        self._batches[batch.id] = batch
        self.activity.batches = len(self._batches)
        for child in batch.children:
            self._children[child.id] = child
            self.runtime.remember(child.id, self.ctx.self)
        if background:
            goals = "; ".join(c.task.goal for c in batch.children)
            await self.deliveries.record_start(batch.id, goals)
        else:
            batch.reply = reply
        for child in batch.children:
            if child.ticket.admitted:
                await self._start(child)
            else:
                position = self.runtime.gate.position(child.ticket)
                self.owner.hub.publish(
                    ev.SubagentQueued(batch.id, child.id, child.task.goal, position)
                )
        if background:
            return DelegationStarted(batch.id, tuple(c.id for c in batch.children), len(queued))
        return None

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
        """Start the child's driver from the template; it reports back with ``SessionUp``."""
        batch = child.batch
        if batch.stopped is not None:  # admitted after a stop: never runs
            child.verdict = (TaskStatus.INTERRUPTED, f"not started: {batch.stopped}")
            await self._finish(child)
            return
        plan = child_plan(
            owner=self.owner,
            config=self.config,
            depth=self.depth,
            subagent_id=child.id,
            task=child.task,
            progress=child.progress,
            supervisor=self.ctx.self,
            host_for=self.runtime.host,
        )
        now = trio.current_time()
        child.state = "running"
        child.started_at = now
        child.progress.touch("starting")
        assert self._sup is not None
        try:
            handle = await self._sup.start_child(None, plan, name=child.id)
        except ActorError as error:  # stopping, or a start that failed: this task's failure
            child.verdict = (TaskStatus.FAILED, f"the child did not start: {error}")
            await self._finish(child)
            return
        driver = handle.ref if handle is not None else None
        if driver is not None:  # None: it ended already, and its ChildEnded is on its way
            child.driver = driver
            child.monitor = self.ctx.monitor(driver)
        waited = now - child.queued_at if child.ticket.queued_at is not None else 0.0
        self.owner.hub.publish(ev.SubagentStarted(batch.id, child.id, child.task.goal, waited))

    def _session_up(self, subagent_id: str, session: ActorRef) -> str | None:
        """A driver's session runs: keep its ref; answer a stop asked for meanwhile."""
        child = self._children.get(subagent_id)
        if child is None or child.state != "running":
            return "the subagent was stopped"
        child.session = session
        if child.verdict is not None:
            return child.verdict[1]
        return child.stop_requested

    # -- ends --------------------------------------------------------------------------

    async def _ended(self, subagent_id: str, outcome: RunOutcome, closed: bool) -> None:
        """A driver's result: the task's end (unless the supervisor ended it first)."""
        child = self._children.get(subagent_id)
        if child is None or child.state != "running":
            return
        child.outcome = outcome
        if not closed:  # it failed or was cancelled: its session was killed, not closed
            await self._end_sessions([child])
        await self._finish(child)

    async def _driver_down(self, driver: ActorRef, reason: ExitReason) -> None:
        """A driver exited without a ``ChildEnded`` (it could not send one)."""
        child = self._children.get(driver.name)
        if child is None or child.driver != driver or child.state != "running":
            return
        child.outcome = RunOutcome(None, detail=f"its driver ended: {reason.describe()}")
        await self._end_sessions([child])
        await self._finish(child)

    async def _finish(self, child: ChildRecord) -> None:
        """Record a task's end (once), free its slot, and complete its batch if it was last."""
        if child.state == "done":
            return
        child.state = "done"
        if child.monitor is not None:
            self.ctx.demonitor(child.monitor)
        self.runtime.gate.release(child.ticket)
        now = trio.current_time()
        child.ended_at = now
        spill = self.owner.config.spill_dir / "delegation" / f"{child.id}.txt"
        r = child.result = await settle(child, now, spill)
        self.owner.hub.publish(
            ev.SubagentFinished(
                child.batch.id,
                child.id,
                r.status.value,
                r.detail,
                r.duration,
                len(r.summary),
                r.usage,
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
        self.activity.batches = len(self._batches)
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
        await self.deliveries.finished(
            batch.id, format_batch(done), self.ctx.parent, hard_stopped=batch.hard_stopped
        )

    # -- liveness ----------------------------------------------------------------------

    async def _check(self) -> None:
        self.deliveries.flush(self.ctx.parent)
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
        """Kill the drivers of ``children`` (each with its session's subtree), all at once."""
        # shutdown: stopped on purpose by its owner (the DynamicSupervisor logs it quietly)
        reason = ExitReason.shutdown(f"stopped by {self.ctx.path}: {why}")
        await kill_all([c.driver for c in children if c.driver is not None], reason)
        await self._end_sessions(children)
        for child in children:
            await self._finish(child)

    async def _end_sessions(self, children: list[ChildRecord]) -> None:
        await mark_ended(self.owner.deps.store, children, self.owner.config.store_timeout)

    # -- stop and steer ----------------------------------------------------------------

    async def _soft_stop(self, reason: str) -> None:
        """Forward a soft interrupt: running children are interrupted, queued ones end."""
        queued: list[ChildRecord] = []
        for batch in self._batches.values():
            batch.stopped = reason
        for child in list(self._children.values()):
            if child.state == "queued":
                queued.append(child)
            elif child.state == "running":
                if child.session is None:
                    child.stop_requested = reason  # told when its session is up
                    continue
                try:
                    child.session.cast_nowait(Interrupt(reason))
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

    async def _stop_background(self, reason: str) -> int:
        """The emergency stop: end every background batch; the number of tasks stopped."""
        batches = [b for b in self._batches.values() if b.background]
        children = [c for b in batches for c in b.children if c.state != "done"]
        for batch in batches:
            batch.stopped = reason
        await self._stop_children(children, reason)
        return len(children)

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
        session = child.session
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
