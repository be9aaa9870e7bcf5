"""The session actor: owns a conversation, takes prompts and control verbs.

The session owns its ``Conversation``. A prompt starts a turn: a
``TurnActor`` task child named ``turn-<n>`` that owns a working copy of it
(``Conversation.copy``) while it runs; the session watches it with a monitor,
then adopts the transcript and takes the ``TurnResult`` that come back as the
task's value (``TurnDone``). While a
turn runs the session's mailbox stays free, so steer, redirect, interrupt,
cancel, approval answers and new prompts are handled at once:

- **steer / redirect / interrupt** are sent to the turn through its ``TurnHandle``
  (``control.py``: bounded channels the turn reads at its seams);
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
  prompt, the context meter and the compaction policy across turns; a turn
  works on its own copy and gives it back, and a ``/compress`` or a changed
  tool set reaches a running turn as a message (``control.py``);
- **tools**: a turn offers and runs a ``ToolSnapshot`` of the session's view
  of the shared registry (``tool_view.py``); when an MCP server adds or removes
  tools there (``RegistryChanged``) or is switched here (``SetMcpServer``), the
  running turn gets the new snapshot for its next request (``turns.py``);
- **background review** (``reviews.py``): after every N completed user turns
  a reviewer child saves what is worth remembering; any new input or control
  verb kills it first.

On start the session creates its row in the store, or resumes it: the
transcript is loaded, and tool calls left without a result by a crash get a
synthetic one, so the next request is valid (``startup.py``). Its children,
and what each one's crash does to it, are declared in ``tree.py``.
"""

from __future__ import annotations

import functools
import logging
import weakref
from collections.abc import Awaitable, Callable

import attrs

from actors import (
    ActorRef,
    Down,
    ExitReason,
    MailboxConfig,
    MailboxFull,
    Overflow,
    Reply,
)
from hermes.goals import GoalCall, GoalWake, LoopTick, is_slash
from hermes.model import Usage
from hermes.processes import NoticeKind, NoticeSink, ProcessNotice
from hermes.skills import refine_focus
from hermes.tools import ToolContext

from . import events as ev
from .approvals import ApprovalBroker
from .children import ChildOwner, SubagentLink
from .config import BusyMode, SessionConfig
from .cooldown_record import restore_cooldown
from .deps import SessionDeps
from .errors import (
    InvalidInput,
    NoTurnRunning,
    QueueFull,
    SessionBusy,
    SessionClosed,
    SessionError,
)
from .goal_link import apply, apply_slash, goal_keeper, restore_goals
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
from .outcome import TurnResult
from .prompt import BlockedNotices, session_system_prompt
from .prompt_record import PromptRecord
from .reviews import ReviewDue
from .startup import (
    approval_session,
    context_keeper,
    open_conversation,
    record_yolo,
    recorded_yolo,
    review_host,
    tool_services,
)
from .tool_view import RegistryChanged, SessionTools
from .tree import start_services
from .turn import StartCompaction
from .turns import RunningTurn, TurnOwner

log = logging.getLogger(__name__)


@attrs.frozen(slots=True)
class Cancelled:
    """The answer to a cancel: the turn's result and the inputs that will not run."""

    result: TurnResult | None
    dropped: tuple[str, ...] = ()


_LIVE_VERBS = (Prompt, Steer, Redirect, Interrupt, Cancel, Compress, Close)
"""Verbs that stop a background review before anything else happens."""


class SessionActor(TurnOwner):
    """One conversation; see the module docstring."""

    # No trapped exits: its task children are unlinked (``TaskChild``), and a linked
    # child that fails (``services``, ``subagents``) fails the session (``tree.py``).
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
        self._watch_key = object()
        """Its watch on the shared registry (``_sync_tools``)."""
        self.session_id = session_id
        self._given_hub = hub
        self.turn_number = 0
        self.usage = Usage()
        self._running: RunningTurn | None = None
        self._closed = False
        self.context_used = 0
        """Tokens of the context as of the latest reply (``TurnResult.context_used``)."""

    # -- start ---------------------------------------------------------------------------

    async def on_start(self) -> None:
        config, deps = self.config, self.deps
        opened = await open_conversation(deps.store, config, self.session_id)
        self.conversation = opened.conversation
        self.usage = opened.usage
        session_id = self.session_id = self.conversation.session_id
        self.hub = self._given_hub or ev.EventHub(session_id)
        self.queue = InputQueue(config.queue_limit, self.hub, session_id)
        self.subagents = SubagentLink(deps.subagents, session_id)
        self.approvals = ApprovalBroker(
            self.hub, config.approval_timeout, unattended=config.unattended
        )
        # A function of values, not a bound method: the keeper must not hold the actor
        # (that made every closed session cyclic garbage). It builds for a tool set.
        build = functools.partial(
            session_system_prompt, config, memory=deps.memory, report=BlockedNotices(self.hub)
        )
        self.keeper = context_keeper(config, deps, self.tools.snapshot(), self.hub, build)
        self._sync_tools()  # watch the shared registry from now on
        self.prompts = PromptRecord(
            deps.store, session_id, config.model, str(config.cwd), config.store_timeout
        )
        stored = await self.prompts.restore(self.conversation.messages)  # seed #18
        if stored is not None:
            self.keeper.system = stored.blocks
            self.keeper.tool_order = tuple(t.name for t in stored.tools or ()) or None
        await self.prompts.keep(self.keeper.system, self.keeper.offered())
        if self.conversation.messages:  # a summary failure's cooldown still runs (seed #196)
            await restore_cooldown(self.keeper.policy, deps.store, session_id, config.store_timeout)
        self.reviews = review_host(config, deps, self.hub, _charge_to(self))
        self.reviews.resume(self.conversation.messages)  # seed #261
        self.services, self.processes = await start_services(
            self.ctx, session_id, _notice_sink(self.ctx.self, session_id), deps
        )
        approvals = approval_session(
            config, deps, await recorded_yolo(deps.store, session_id, config.store_timeout)
        )
        self.tools_ctx = ToolContext.create(
            config.cwd,
            config.spill_dir,
            services=tool_services(config, deps, session_id, self.processes),
            environ=deps.environ,
            keep_env=config.env_passthrough,
            approvals=approvals,
        )
        await self._start_children()
        self.goals = goal_keeper(self)
        await restore_goals(self)

    def _set_mcp_server(self, server: str, on: bool) -> tuple[str, ...]:
        """Offer (or stop offering) an MCP server's tools here; the servers now off.

        When the set changes, the keeper and a running turn get the new tool set
        and the stable tier of the system prompt rebuilt for it (``_sync_tools``).
        """
        if self.tools.set_server(server, on):
            self._sync_tools()
        return tuple(sorted(self.tools.off))

    async def on_stop(self, reason: ExitReason) -> None:
        self.tools.unwatch(self._watch_key)  # the shared registry must not keep it

    async def _start_children(self) -> None:
        """The subagents' supervisor, if this session hosts any; its services go to the tools."""
        assert self.session_id is not None
        owner = ChildOwner(
            self.session_id,
            self.config,
            attrs.evolve(self.deps, registry=self.tools),  # children: minus the servers off here
            self.hub,
            processes=self.processes,
        )
        services = await self.subagents.start(self.ctx, owner)
        if services:
            self.tools_ctx = attrs.evolve(
                self.tools_ctx, services={**self.tools_ctx.services, **services}
            )

    # -- the mailbox ---------------------------------------------------------------------

    async def receive(self, message: object) -> object:
        match message:
            case ProcessNotice(kind=NoticeKind.HANDED_OVER):
                # News, not input: the delegation's result says it.
                self.hub.publish(_noticed(message))
            case ProcessNotice():
                await self._machine_input(MachineInput("process", message.text, _noticed(message)))
            case MachineInput():
                await self._machine_input(message)
            case GoalWake() | LoopTick():
                await self.goals.signal(message)
            case RegistryChanged():
                self._sync_tools()
            case ReviewDue():
                if self.reviews.due(message):
                    await self._start_review(message.turn)
            case Down():
                running = self._running
                if running is not None and running.task.is_down(message):
                    await self._turn_ended()
                elif self.goals.owns(message):
                    await self.goals.on_down(message)
                else:
                    await self.reviews.on_down(self.ctx, message)
            case _:
                try:
                    return await self._handle(message)
                except SessionError as error:
                    return Refused(error)
        return None

    async def _handle(self, message: object) -> object:
        match message:
            case GetState():
                return self._state()
            case GetHub():
                return self.hub
            case SetYolo(on=on):
                self.tools_ctx.approvals.yolo = bool(on)  # read by the gate at each command
                assert self.session_id is not None
                await record_yolo(
                    self.deps.store, self.session_id, bool(on), self.config.store_timeout
                )
                return self.tools_ctx.approvals.yolo
            case SetMcpServer(server=server, on=on):
                return self._set_mcp_server(server, on)
            case RespondApproval(request_id=request_id, choice=choice, content=content):
                self.approvals.respond(request_id, choice, content)
                return None
            case ListSubagents() | SteerSubagent() | StopSubagent():
                return await self.subagents.call(message)
            case GoalCall(command=command) if not self._closed:
                return await apply(self.goals, command)
        if self._closed:
            raise SessionClosed(f"session {self.session_id} is closed")
        if isinstance(message, _LIVE_VERBS):
            await self.reviews.cancel(self.ctx, f"{type(message).__name__.lower()} arrived")
        match message:
            case Prompt():
                return await self._prompt(message)
            case Steer(text=text):
                return await self._steer(text)
            case Redirect(text=text):
                return self._redirect(text)
            case Interrupt(reason=reason):
                return self._interrupt(reason)
            case Cancel(reason=reason):
                return await self._cancel(reason)
            case Compress(focus=focus):
                return await self._compress(focus)
            case Close(reason=reason):
                return await self._close(reason)
        raise InvalidInput(f"a session does not handle {type(message).__name__} messages")

    # -- prompts -------------------------------------------------------------------------

    def _waiter(self, wait: bool) -> Reply | None:
        return self.ctx.defer_reply() if wait and self.ctx.handling_call else None

    async def _prompt(self, prompt: Prompt) -> object:
        text = checked_text(prompt.text, "prompt")
        focus = refine_focus(text)
        if focus is not None and self.reviews.reviewable:  # /refine: a review now (seed #274)
            return await self._refine(focus)
        if is_slash(text) and not self.config.unattended:  # a person's /goal, /loop...
            answer = await apply_slash(self.goals, self.hub, text)
            return Accepted("goal", answer.turn)
        running = self._running
        if running is None:
            waiter = self._waiter(prompt.wait)
            number = await self._start_turn(PendingInput(text, waiter))
            return Accepted("started", number)
        mode = prompt.mode or self.config.busy_mode
        if mode is BusyMode.INTERRUPT and not running.handle.interruptible:
            mode = BusyMode.QUEUE  # subagents or compression in flight: never cut them off
        if mode is BusyMode.REJECT:
            raise SessionBusy(
                f"session {self.session_id} is running turn {self.turn_number}; "
                "the prompt was not accepted (busy mode reject)"
            )
        if mode is BusyMode.STEER or mode is BusyMode.INTERRUPT:
            # interrupt (Hermes): the message redirects the running turn at its next
            # seam; a steer when no model request is in flight (seeds #8, #13, #220)
            how = "steered"
            try:
                if mode is BusyMode.INTERRUPT and running.handle.redirect(text):
                    how = "redirected"
                elif mode is BusyMode.STEER:
                    running.handle.steer(text)
            except QueueFull:
                if mode is BusyMode.STEER:
                    raise
                mode = BusyMode.QUEUE  # the turn's corrections are full: it waits its turn
            else:
                waiter = self._waiter(prompt.wait)
                if waiter is not None:
                    running.waiters.append(waiter)
                return Accepted(how, self.turn_number)
        if mode is BusyMode.ROLLBACK:
            await self._stop_turn("rolled back: a new prompt replaced it", rollback=True)
            number = await self._start_turn(PendingInput(text, self._waiter(prompt.wait)))
            return Accepted("rolled_back", number)
        item = PendingInput(text)
        position = self.queue.add(item)
        item.waiter = self._waiter(prompt.wait)
        return Accepted("queued", None, position)

    async def _steer(self, text: str) -> Accepted:
        text = checked_text(text, "steer")
        if self._running is None:
            number = await self._start_turn(PendingInput(text))
            return Accepted("started", number)
        self._running.handle.steer(text)
        return Accepted("steered", self.turn_number)

    def _redirect(self, text: str) -> Accepted:
        text = checked_text(text, "redirect")
        running = self._require_turn("redirect")
        redirected = running.handle.redirect(text)
        return Accepted("redirected" if redirected else "steered", self.turn_number)

    def _interrupt(self, reason: str) -> Accepted:
        if self.subagents.interrupt(reason) and self._running is None:
            return Accepted("interrupting_subagents", None)
        running = self._require_turn("interrupt")
        running.handle.interrupt(reason)
        self.approvals.deny_all()
        return Accepted("interrupting", self.turn_number)

    async def _compress(self, focus: str | None) -> Accepted:
        if focus is not None:
            focus = checked_text(focus, "compress focus")
        if self._running is not None:
            self._running.handle.compress(focus)
            return Accepted("compress_requested", self.turn_number)
        number = await self._start_turn(None, StartCompaction(focus))
        return Accepted("compacting", number)

    def _require_turn(self, verb: str) -> RunningTurn:
        if self._running is None:
            raise NoTurnRunning(f"session {self.session_id} is idle: nothing to {verb}")
        return self._running

    async def _cancel(self, reason: str) -> Cancelled:
        result = await self._stop_turn(reason)
        await self.subagents.cancel_all(reason)
        return Cancelled(result, self.queue.drop_all(reason))

    async def _close(self, reason: str) -> Cancelled:
        cancelled = await self._cancel(f"the session was closed ({reason})")
        self._closed = True
        await self.goals.stop()
        await self.subagents.stop()  # every child subtree is gone first
        await self.services.stop()  # every process group it owns is killed and reaped first
        await self.deps.store.end_session(self.conversation.session_id, reason)
        self.ctx.stop()
        return cancelled

    def _state(self) -> SessionState:
        running = self._running
        return SessionState(
            id=self.conversation.session_id,
            busy=running is not None,
            turn=self.turn_number,
            turn_path=running.task.path if running is not None else None,
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


def _charge_to(session: SessionActor) -> Callable[[Usage], Awaitable[None]]:
    """The session's ``_charge_usage`` through a weak reference: the review host the
    session owns must not hold the actor (a cycle made every closed session garbage)."""
    method = weakref.WeakMethod(session._charge_usage)

    async def charge(usage: Usage) -> None:
        bound = method()
        if bound is not None:
            await bound(usage)

    return charge


def _noticed(notice: ProcessNotice) -> ev.ProcessNoticed:
    return ev.ProcessNoticed(notice.kind.value, notice.process_id, notice.text)


def _notice_sink(session: ActorRef, session_id: str) -> NoticeSink:
    """Called in the registry's task: hand a notice to the session's mailbox."""

    def sink(notice: ProcessNotice) -> None:
        try:
            session.cast_nowait(notice)
        except MailboxFull:
            log.warning(
                "session %s: mailbox full, process notice lost: %s", session_id, notice.text
            )

    return sink
