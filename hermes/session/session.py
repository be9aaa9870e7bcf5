"""The session actor: owns a conversation, takes prompts and control verbs.

Idle, the session holds its ``Conversation``. A prompt starts a turn: a
``TurnActor`` task child named ``turn-<n>`` to which the conversation is lent
until the turn has exited (the session watches it with a monitor, then takes
its ``TurnResult`` from the task's result). While a
turn runs the session's mailbox stays free, so steer, redirect, interrupt,
cancel, approval answers and new prompts are handled at once:

- **steer / redirect / interrupt** go to the turn's ``TurnControls``;
- **cancel** kills the turn (its scope is cancelled; it settles the transcript
  in a shielded step) and answers once the session is idle and persisted;
- **a new prompt** follows the busy mode (``config.BusyMode``);
- **input from the machine** (process notices, finished background
  delegations: ``MachineInput``) starts a turn when idle, else waits;
- **subagent verbs** (list, steer, stop one by id) go to the children's
  supervisor (``children.py``), which also gets soft interrupts and, after a
  hard cancel, stops every child before the cancel returns;
- **compress** (``/compress``) asks the running turn to compact before its
  next request, or, when idle, runs a compaction job in a turn actor (so a
  cancel still finds the mailbox free). The ``ContextKeeper`` holds the system
  prompt, the context meter and the compaction policy across turns;
- **background review** (``reviews.py``): after every N completed user turns
  a reviewer child saves what is worth remembering; any new input or control
  verb kills it first.

On start the session creates its row in the store, or resumes it: the
transcript is loaded, and tool calls left without a result by a crash get a
synthetic one, so the next request is valid.
"""

from __future__ import annotations

import logging

import attrs
import trio

from actors import (
    Actor,
    ActorRef,
    Down,
    Exit,
    ExitReason,
    MailboxConfig,
    MailboxFull,
    MonitorRef,
    Overflow,
    Reply,
    TaskCancelled,
    TaskFailed,
    TaskRef,
)
from hermes.memory import LiveMemory, MemoryService
from hermes.model import Message, TextBlock, Usage
from hermes.processes import (
    ForegroundLedger,
    NoticeKind,
    ProcessNotice,
    ProcessService,
    describe_leftovers,
    spawn_process_registry,
)
from hermes.procgroup import GroupLedger
from hermes.store import SessionNotFound, StoreError, flag_queries
from hermes.tools import (
    ApprovalMode,
    ApprovalSession,
    CheckpointService,
    ModelJudge,
    ToolContext,
)

from . import events as ev
from .approvals import ApprovalBroker
from .children import ChildOwner, SubagentLink
from .config import BusyMode, SessionConfig
from .context_keeper import ContextKeeper
from .control import TurnControls
from .conversation import Conversation, open_tool_uses
from .deps import SessionDeps
from .errors import (
    InvalidInput,
    NoTurnRunning,
    QueueFull,
    SessionBusy,
    SessionClosed,
    SessionError,
)
from .inputs import InputQueue, PendingInput, checked_text
from .messages import (
    Accepted,
    Cancel,
    Close,
    Compress,
    GetHub,
    GetState,
    Interrupt,
    ListSubagents,
    MachineInput,
    Prompt,
    Redirect,
    Refused,
    RespondApproval,
    SessionState,
    SetMcpServer,
    SetYolo,
    Steer,
    SteerSubagent,
    StopSubagent,
)
from .outcome import TurnEnd, TurnResult
from .prompt import session_system_prompt, turn_text
from .reviews import ReviewDue, ReviewHost
from .tool_view import SessionTools
from .turn import StartCompaction, StartTurn, TurnActor, TurnDeps, TurnProgress

log = logging.getLogger(__name__)


@attrs.frozen(slots=True)
class Cancelled:
    """The answer to a cancel: the turn's result and the inputs that will not run."""

    result: TurnResult | None
    dropped: tuple[str, ...] = ()


@attrs.define(slots=True)
class _Running:
    number: int
    ref: TaskRef[TurnResult]
    progress: TurnProgress
    monitor: MonitorRef
    controls: TurnControls
    waiters: list[Reply]
    from_user: bool
    """A person's prompt (not machine input, not a compaction job): counts toward reviews."""


_LIVE_VERBS = (Prompt, Steer, Redirect, Interrupt, Cancel, Compress, Close)
"""Verbs that stop a background review before anything else happens."""

_START = StartTurn()


class SessionActor(Actor):
    """One conversation; see the module docstring."""

    trap_exits = True  # a crashed turn is handled here, not propagated
    mailbox = MailboxConfig(capacity=256, overflow=Overflow.FAIL)
    shutdown_budget = 12.0  # the process registry may need ~1-6 s to kill its groups

    def __init__(
        self,
        config: SessionConfig,
        deps: SessionDeps,
        session_id: str | None = None,
        hub: ev.EventHub | None = None,
    ) -> None:
        """``hub``: pass one (made with the session id) to keep subscribers across restarts."""
        if hub is not None and session_id is None:
            raise ValueError("a session given an event hub needs its session_id too")
        self.config = config
        self.deps = deps
        self.tools = SessionTools(deps.registry)
        """The shared tools as this session sees them (minus the MCP servers it turned off)."""
        self.session_id = session_id
        self._given_hub = hub
        self.turn_number = 0
        self.usage = Usage()
        self._running: _Running | None = None
        self._closed = False
        self.context_used = 0
        """Tokens of the context as of the latest reply (see ``TurnControls.context_used``)."""

    # -- start ---------------------------------------------------------------------------

    async def on_start(self) -> None:
        store = self.deps.store
        transcript = None
        if self.session_id is not None:
            try:
                transcript = await store.load(self.session_id)
            except SessionNotFound:
                transcript = None
        if transcript is None:
            info = await store.create_session(
                model=self.config.model, title=self.config.title, session_id=self.session_id
            )
            self.session_id = info.id
            messages: tuple[Message, ...] = ()
        else:
            if transcript.session.ended:
                await store.reopen_session(transcript.session.id)
            messages = transcript.messages
            self.usage = transcript.session.usage
        assert self.session_id is not None
        self.conversation = Conversation(store, self.session_id, messages)
        leftovers = await describe_leftovers(  # foreground commands a dead daemon left
            store, self.session_id, (use.id for use in open_tool_uses(messages))
        )
        if await self.conversation.close_open_uses(
            "the session restarted while it was running", leftovers.texts
        ):
            await leftovers.forget(store)
        self.hub = self._given_hub or ev.EventHub(self.session_id)
        self.queue = InputQueue(self.config.queue_limit, self.hub, self.session_id)
        self.subagents = SubagentLink(self.deps.subagents, self.session_id)
        self.approvals = ApprovalBroker(
            self.hub, self.config.approval_timeout, unattended=self.config.unattended
        )
        config = self.config
        self.keeper = ContextKeeper(
            config.compression,
            client=self.deps.client,
            model=config.model,
            context_window=config.context_window,
            max_tokens=config.max_tokens,
            tools=self.tools.specs(),
            hub=self.hub,
            build_system=self._build_system_prompt,
            commit_timeout=config.store_timeout,
        )
        self.reviews = ReviewHost(
            config.review if not config.unattended else attrs.evolve(config.review, enabled=False),
            self.deps.memory,
            self.deps.client,
            self.hub,
            charge=self._charge_usage,
        )
        self.processes = await self._start_processes()
        recorded_yolo = await self._recorded_yolo()
        self.tools_ctx = ToolContext.create(
            self.config.cwd,
            self.config.spill_dir,
            services=self._services(),
            environ=self.deps.environ,
            approvals=self._approval_session(recorded_yolo),
        )
        await self._start_children()

    async def _recorded_yolo(self) -> bool:
        """The yolo switch a person set on this session before (it survives restarts)."""
        assert self.session_id is not None
        try:
            return await self.deps.store.request(
                flag_queries.GetYolo(self.session_id), timeout=self.config.store_timeout
            )
        except StoreError as error:
            log.warning("session %s: its yolo switch could not be read: %s", self.session_id, error)
            return False

    def _approval_session(self, recorded_yolo: bool = False) -> ApprovalSession:
        config, deps = self.config, self.deps
        mode = ApprovalMode(config.approval_mode)
        judge = (
            ModelJudge(
                client=deps.client, model=config.judge_model or config.model, cwd=str(config.cwd)
            )
            if mode is ApprovalMode.SMART
            else None
        )
        return ApprovalSession(
            yolo=config.yolo or recorded_yolo,
            timeout=config.approval_timeout,
            allowlist=set(deps.allowlist),
            allowlist_source=deps.allowlist_source,
            save_always=deps.save_always,
            mode=mode,
            judge=judge,
        )

    def _set_mcp_server(self, server: str, on: bool) -> tuple[str, ...]:
        """Offer (or stop offering) an MCP server's tools here; the servers now off.

        When the set changes, the stable tier of the system prompt is rebuilt with
        the tools' guidance as it now is (the tool list changed, so the cached
        prefix is new anyway); the other tiers stay as they were.
        """
        if self.tools.set_server(server, on):
            self.keeper.tools = self.tools.specs()
            stable = self._build_system_prompt()[0]
            self.keeper.system = (stable, *self.keeper.system[1:])
        return tuple(sorted(self.tools.off))

    async def _record_yolo(self, on: bool) -> None:
        """Keep the switch in the store, so a restarted session has it (a failure is logged)."""
        assert self.session_id is not None
        try:
            await self.deps.store.request(
                flag_queries.SetYolo(self.session_id, on), timeout=self.config.store_timeout
            )
        except StoreError as error:
            log.warning("session %s: its yolo switch was not saved: %s", self.session_id, error)

    def _services(self) -> dict[type, object]:
        assert self.session_id is not None
        ledger = ForegroundLedger(
            self.deps.store, self.session_id, timeout=self.deps.processes.store_timeout
        )
        services: dict[type, object] = {ProcessService: self.processes, GroupLedger: ledger}
        if self.deps.memory is not None and not self.config.unattended:
            services[MemoryService] = LiveMemory(self.deps.memory)
        if self.config.checkpoint_dir is not None:
            services[CheckpointService] = CheckpointService(root=self.config.checkpoint_dir)
        return services

    async def _start_children(self) -> None:
        """The subagents' supervisor, if this session hosts any; its services go to the tools."""
        assert self.session_id is not None
        owner = ChildOwner(
            self.session_id,
            self.config,
            attrs.evolve(self.deps, registry=self.tools),  # children: minus the servers off here
            self.hub,
            self._remaining_context,
            processes=self._current_processes,
        )
        services = await self.subagents.start(self.ctx, owner)
        if services:
            self.tools_ctx = attrs.evolve(
                self.tools_ctx, services={**self.tools_ctx.services, **services}
            )

    def _remaining_context(self) -> int:
        running = self._running
        used = running.controls.context_used if running is not None else self.context_used
        return max(0, self.config.context_window - used)

    def _current_processes(self) -> ProcessService | None:
        """Our process service while its registry runs (children hand processes to it)."""
        registry = self.processes.registry
        if self._closed or (isinstance(registry, ActorRef) and not registry.is_alive):
            return None
        return self.processes

    async def _start_processes(self) -> ProcessService:
        """The session's process registry (it adopts processes a crashed daemon left)."""
        assert self.session_id is not None
        return await spawn_process_registry(
            self.ctx,
            self.session_id,
            self._on_process_notice,
            store=self.deps.store,
            config=self.deps.processes,
            handoff=self.deps.handoff,
        )

    def _on_process_notice(self, notice: ProcessNotice) -> None:
        """Called in the registry's task: hand the notice to our own mailbox."""
        try:
            self.ctx.self.cast_nowait(notice)
        except MailboxFull:
            log.warning(
                "session %s: mailbox full, process notice lost: %s", self.session_id, notice.text
            )

    async def _machine_input(self, item: MachineInput) -> None:
        """Input from the machine (a process notice, a background delegation's result).

        It never interrupts or rolls back a turn, and is never refused: when idle
        it starts a turn; with busy mode ``steer`` it goes into the running turn;
        otherwise it waits its turn in the queue.
        """
        if item.event is not None:
            self.hub.publish(item.event)
        if self._closed:
            return
        running = self._running
        if running is None:
            await self._start_turn(PendingInput(item.text, delivered=item))
            return
        if self.config.busy_mode is BusyMode.STEER:
            try:
                running.controls.steer(item.text)
            except QueueFull:
                pass
            else:
                await self._delivered(item)
                return
        if self.queue.full:
            log.warning(
                "session %s: input queue full, %s input lost: %s",
                self.session_id,
                item.source,
                item.text,
            )
            return
        self.queue.add(PendingInput(item.text, delivered=item))

    async def _delivered(self, item: MachineInput | None) -> None:
        """Run a machine input's delivery hook (bounded; a failure is only logged)."""
        if item is None or item.on_delivered is None:
            return
        with trio.move_on_after(self.config.store_timeout):
            try:
                await item.on_delivered()
            except (StoreError, SessionError) as error:
                log.warning(
                    "session %s: could not record delivery of %s input: %s",
                    self.session_id,
                    item.source,
                    error,
                )

    def _build_system_prompt(self) -> tuple[TextBlock, ...]:
        return session_system_prompt(self.config, self.tools, self.deps.memory)

    async def on_stop(self, reason: ExitReason) -> None:
        # A turn left running (reported unkillable) must not write once the next
        # incarnation owns the transcript. No await: the stop hook may be out of time.
        conversation: Conversation | None = getattr(self, "conversation", None)
        if conversation is not None:
            conversation.revoke(f"session stopped: {reason.describe()}")

    # -- the mailbox ---------------------------------------------------------------------

    async def receive(self, message: object) -> object:
        if isinstance(message, ProcessNotice):
            event = ev.ProcessNoticed(message.kind.value, message.process_id, message.text)
            if message.kind is NoticeKind.HANDED_OVER:
                self.hub.publish(event)  # news, not input: the delegation's result says it
                return None
            await self._machine_input(MachineInput("process", message.text, event))
            return None
        if isinstance(message, MachineInput):
            await self._machine_input(message)
            return None
        if isinstance(message, ReviewDue):
            if self.reviews.due(message):
                await self._start_review(message.turn)
            return None
        if isinstance(message, Exit):
            if self.subagents.is_supervisor(message.actor):
                if not self._closed:
                    log.warning(
                        "session %s: subagent supervisor exited (%s); restarting it",
                        self.session_id,
                        message.reason.describe(),
                    )
                    await self._start_children()
                return None
            if message.actor == self.processes.registry and not self._closed:
                log.warning(
                    "session %s: process registry exited (%s); restarting it",
                    self.session_id,
                    message.reason.describe(),
                )
                self.processes = await self._start_processes()
                self.tools_ctx = attrs.evolve(
                    self.tools_ctx,
                    services={**self.tools_ctx.services, ProcessService: self.processes},
                )
            return None
        if isinstance(message, Down):
            running = self._running
            if running is not None and message.monitor == running.monitor:
                await self._turn_ended()
            else:
                await self.reviews.on_down(self.ctx, message)
            return None
        try:
            return await self._handle(message)
        except SessionError as error:
            return Refused(error)

    async def _handle(self, message: object) -> object:
        if isinstance(message, GetState):
            return self._state()
        if isinstance(message, GetHub):
            return self.hub
        if isinstance(message, SetYolo):
            self.tools_ctx.approvals.yolo = bool(message.on)  # read by the gate at each command
            await self._record_yolo(bool(message.on))
            return self.tools_ctx.approvals.yolo
        if isinstance(message, SetMcpServer):
            return self._set_mcp_server(message.server, message.on)
        if isinstance(message, RespondApproval):
            self.approvals.respond(message.request_id, message.choice, message.content)
            return None
        if isinstance(message, ListSubagents | SteerSubagent | StopSubagent):
            return await self.subagents.call(message)
        if self._closed:
            raise SessionClosed(f"session {self.session_id} is closed")
        if isinstance(message, _LIVE_VERBS):
            await self.reviews.cancel(self.ctx, f"{type(message).__name__.lower()} arrived")
        if isinstance(message, Prompt):
            return await self._prompt(message)
        if isinstance(message, Steer):
            return await self._steer(message.text)
        if isinstance(message, Redirect):
            return self._redirect(message.text)
        if isinstance(message, Interrupt):
            return self._interrupt(message.reason)
        if isinstance(message, Cancel):
            return await self._cancel(message.reason)
        if isinstance(message, Compress):
            return await self._compress(message.focus)
        if isinstance(message, Close):
            return await self._close(message.reason)
        raise InvalidInput(f"a session does not handle {type(message).__name__} messages")

    # -- prompts -------------------------------------------------------------------------

    def _waiter(self, wait: bool) -> Reply | None:
        return self.ctx.defer_reply() if wait and self.ctx.handling_call else None

    async def _prompt(self, prompt: Prompt) -> object:
        text = checked_text(prompt.text, "prompt")
        running = self._running
        if running is None:
            waiter = self._waiter(prompt.wait)
            number = await self._start_turn(PendingInput(text, waiter))
            return Accepted("started", number)
        mode = prompt.mode or self.config.busy_mode
        if mode is BusyMode.INTERRUPT and running.controls.holds:
            mode = BusyMode.QUEUE  # subagents or compression in flight: never cut them off
        if mode is BusyMode.REJECT:
            raise SessionBusy(
                f"session {self.session_id} is running turn {self.turn_number}; "
                "the prompt was not accepted (busy mode reject)"
            )
        if mode is BusyMode.STEER:
            running.controls.steer(text)
            waiter = self._waiter(prompt.wait)
            if waiter is not None:
                running.waiters.append(waiter)
            return Accepted("steered", self.turn_number)
        if mode is BusyMode.ROLLBACK:
            await self._stop_turn("rolled back: a new prompt replaced it", rollback=True)
            number = await self._start_turn(PendingInput(text, self._waiter(prompt.wait)))
            return Accepted("rolled_back", number)
        item = PendingInput(text)
        position = self.queue.add(item)
        item.waiter = self._waiter(prompt.wait)
        if mode is BusyMode.INTERRUPT:
            running.controls.soft_interrupt("interrupted by a new prompt")
            self.approvals.deny_all()
            return Accepted("interrupting", self.turn_number, position)
        return Accepted("queued", None, position)

    async def _steer(self, text: str) -> Accepted:
        text = checked_text(text, "steer")
        if self._running is None:
            number = await self._start_turn(PendingInput(text))
            return Accepted("started", number)
        self._running.controls.steer(text)
        return Accepted("steered", self.turn_number)

    def _redirect(self, text: str) -> Accepted:
        text = checked_text(text, "redirect")
        running = self._require_turn("redirect")
        redirected = running.controls.redirect(text)
        return Accepted("redirected" if redirected else "steered", self.turn_number)

    def _interrupt(self, reason: str) -> Accepted:
        if self.subagents.interrupt(reason) and self._running is None:
            return Accepted("interrupting_subagents", None)
        running = self._require_turn("interrupt")
        running.controls.soft_interrupt(reason)
        self.approvals.deny_all()
        return Accepted("interrupting", self.turn_number)

    async def _compress(self, focus: str | None) -> Accepted:
        if focus is not None:
            focus = checked_text(focus, "compress focus")
        if self._running is not None:
            self.keeper.request(focus)
            return Accepted("compress_requested", self.turn_number)
        number = await self._start_turn(None, StartCompaction(focus))
        return Accepted("compacting", number)

    def _require_turn(self, verb: str) -> _Running:
        if self._running is None:
            raise NoTurnRunning(f"session {self.session_id} is idle: nothing to {verb}")
        return self._running

    # -- turns ---------------------------------------------------------------------------

    async def _start_turn(
        self, item: PendingInput | None, start: StartTurn | StartCompaction = _START
    ) -> int:
        """Spawn the next turn actor: for ``item`` (a prompt), or a compaction job."""
        await self.reviews.cancel(self.ctx, "a new turn started")
        prompt: tuple[TextBlock, ...] = ()
        if item is not None:  # a person's /skill-name expanded, the skills delta note added
            text = await turn_text(
                self.config,
                self.deps.registry,
                self.keeper.system,
                self.conversation.messages,
                item.text,
                from_person=item.delivered is None,
            )
            prompt = (TextBlock(text),)
        self.turn_number += 1
        number = self.turn_number
        controls = TurnControls(self.config.steer_capacity)
        deps = TurnDeps(
            config=self.config,
            client=self.deps.client,
            registry=self.tools,
            keeper=self.keeper,
            hub=self.hub,
            tools_ctx=self.tools_ctx,
            approvals=self.approvals,
        )
        progress = TurnProgress.before(self.conversation)
        actor = TurnActor(number, prompt, deps, self.conversation, controls, progress, start)
        ref = await self.ctx.spawn_task(actor, name=f"turn-{number}", shutdown=0)
        monitor = self.ctx.monitor(ref)
        waiters = [item.waiter] if item is not None and item.waiter is not None else []
        from_user = item is not None and item.delivered is None
        self._running = _Running(number, ref, progress, monitor, controls, waiters, from_user)
        if item is not None:
            await self._delivered(item.delivered)
        return number

    async def _stop_turn(self, reason: str, *, rollback: bool = False) -> TurnResult | None:
        """Hard-cancel the running turn; returns once it is settled and the session idle."""
        running = self._running
        if running is None:
            return None
        running.controls.cancel_reason = reason
        self.approvals.deny_all()
        await running.ref.kill()
        return await self._turn_ended(rollback=rollback, resume_queue=False)

    async def _turn_ended(self, *, rollback: bool = False, resume_queue: bool = True) -> TurnResult:
        running = self._running
        assert running is not None
        self._running = None
        self.ctx.demonitor(running.monitor, flush=True)
        result = await _result_of(running)
        if running.ref.is_alive:
            # Reported unkillable: it may still settle, and must not write over the
            # transcript the session carries on with.
            self.conversation = self.conversation.revoke(f"turn {running.number} outlived its stop")
        if result is None:
            exit_reason = running.ref.exit_reason
            why = exit_reason.describe() if exit_reason is not None else "it did not exit in time"
            result = TurnResult(running.number, TurnEnd.FAILED, "", f"the turn crashed: {why}")
        self.usage = self.usage + result.usage
        self.context_used = running.controls.context_used or self.context_used
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + self.config.store_timeout
            result = await self._repair(running.progress, result, rollback)
        self.queue.hand_back([*running.progress.undelivered, *running.controls.take_steers()])
        for waiter in running.waiters:
            waiter.send(result)
        self.hub.publish(
            ev.TurnCompleted(
                result.turn, result.reason.value, result.detail, result.iterations, result.text
            )
        )
        if resume_queue:
            await self._next_input()
        completed = running.from_user and result.reason is TurnEnd.COMPLETED
        due = completed and self.reviews.turn_completed() and self._idle()
        if due and not self.reviews.schedule(self.ctx, result.turn):
            await self._start_review(result.turn)
        return result

    def _idle(self) -> bool:
        """No turn, nothing queued, not closed: when a background review may run."""
        return (
            self._running is None
            and not self._closed
            and not len(self.queue)
            and not self.conversation.dirty
        )

    async def _start_review(self, turn: int) -> None:
        """A background review, if the session is still idle with nothing queued."""
        if not self._idle() or self.reviews.running:
            return
        config = self.config
        assert self.session_id is not None
        await self.reviews.start(
            self.ctx,
            session_id=self.session_id,
            turn=turn,
            model=config.model,
            system=self.keeper.system,
            tools=self.tools.specs(),
            transcript=tuple(self.conversation.messages),
            cwd=config.cwd,
            spill_dir=config.spill_dir,
            thinking_budget=config.thinking_budget,
        )

    async def _charge_usage(self, usage: Usage) -> None:
        """Work besides turns (a background review) is charged to the session too."""
        assert self.session_id is not None
        await self.deps.store.add_usage(self.session_id, usage)
        self.usage = self.usage + usage

    async def _repair(
        self, progress: TurnProgress, result: TurnResult, rollback: bool
    ) -> TurnResult:
        """Make sure the transcript is valid (and rolled back if asked) after a turn."""
        conv = self.conversation
        try:
            if conv.dirty:
                await conv.resync()
            await conv.close_open_uses(f"the turn ended abnormally ({result.detail})")
            if rollback and progress.compacted:
                detail = "not rolled back: the transcript was compacted during the turn"
                result = attrs.evolve(result, detail=f"{result.detail}; {detail}")
            elif rollback:
                await conv.rollback_to(progress.start_len, progress.start_last)
                self.keeper.meter.reset()  # its anchor may be in the rows just dropped
                result = attrs.evolve(result, reason=TurnEnd.ROLLED_BACK)
        except StoreError as error:
            conv.dirty = True
            self.hub.publish(ev.ErrorOccurred(result.turn, "store", str(error)))
            result = attrs.evolve(
                result, detail=f"{result.detail}; the transcript could not be repaired: {error}"
            )
        return result

    async def _next_input(self) -> None:
        if self._running is None and not self._closed:
            item = self.queue.pop()
            if item is not None:
                await self._start_turn(item)

    async def _cancel(self, reason: str) -> Cancelled:
        result = await self._stop_turn(reason)
        await self.subagents.cancel_all(reason)
        return Cancelled(result, self.queue.drop_all(reason))

    async def _close(self, reason: str) -> Cancelled:
        cancelled = await self._cancel(f"the session was closed ({reason})")
        self._closed = True
        await self.subagents.stop()  # every child subtree is gone first
        registry = self.processes.registry
        if isinstance(registry, ActorRef):
            await registry.stop()  # every process group it owns is killed and reaped first
        await self.deps.store.end_session(self.conversation.session_id, reason)
        self.ctx.stop()
        return cancelled

    def _state(self) -> SessionState:
        running = self._running
        return SessionState(
            id=self.conversation.session_id,
            busy=running is not None,
            turn=self.turn_number,
            turn_path=running.ref.path if running is not None else None,
            queued=len(self.queue),
            messages=self.conversation.next_seq,
            usage=self.usage,
            busy_mode=self.config.busy_mode.value,
            approvals_waiting=self.approvals.waiting,
            closed=self._closed,
            context_tokens=self.keeper.tokens(self.conversation.messages),
            context_window=self.config.context_window,
            reviewing=self.reviews.running,
        )


async def _result_of(running: _Running) -> TurnResult | None:
    """How the turn ended: its result; for a killed or crashed one, what its settle step
    recorded; None if it recorded nothing (it crashed before, or is still running)."""
    if not running.ref.is_alive:
        try:
            return await running.ref.result()
        except (TaskCancelled, TaskFailed):
            pass  # no value: it settled (or tried to) all the same
    return running.progress.settled
