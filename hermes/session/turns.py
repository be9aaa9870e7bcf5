"""The part of a session that runs its turns: start one, stop one, take one's end.

``SessionActor`` (``session.py``) is a ``TurnOwner``: the verbs it dispatches
start, steer and stop turns through the methods here. A turn is a
``TaskChild`` named ``turn-<n>`` (temporary, brutal, unlinked: ``tree.py``);
the session watches it with a monitor, and when it exits (or after it was
killed) takes its ``TurnResult`` (``turn_end.py``), repairs the transcript,
answers the waiters, publishes ``TurnCompleted``, runs the next queued input
and, when due, starts a background review. Input from the machine (process
notices, finished background delegations) never interrupts a turn: it starts
one when idle, or waits (``_machine_input``).

A turn's tools are a value: the ``ToolSnapshot`` of the session's view
(``tool_view.py``) when it starts, in its keeper copy. When the view changes
(the shared registry told the session, ``RegistryChanged``, or an MCP server
was switched here), ``_sync_tools`` retools the session's keeper and sends the
running turn the new snapshot (``ToolsChanged``), which it offers from its next
request on; the adopted keeper is compared again when the turn ends.
"""

from __future__ import annotations

import logging

import attrs
import trio

from actors import Actor, ExitReason, Reply
from hermes.goals import GoalKeeper
from hermes.model import Message, TextBlock, Usage
from hermes.processes import ProcessService
from hermes.store import StoreError
from hermes.tools import ToolContext

from . import events as ev
from .approvals import ApprovalBroker
from .config import BusyMode, SessionConfig
from .context_keeper import ContextKeeper
from .control import CompressAsk, TurnHandle, turn_link
from .conversation import Conversation
from .deps import SessionDeps
from .errors import InvalidInput, QueueFull, SessionBusy, SessionError
from .inputs import InputQueue, PendingInput
from .messages import Accepted, MachineInput
from .outcome import TurnDone, TurnEnd, TurnResult
from .prompt import turn_text
from .prompt_record import PromptRecord
from .reviews import ReviewHost
from .task_child import TaskChild
from .tool_view import SessionTools, registry_sink
from .turn import StartCompaction, StartTurn, TurnActor, TurnDeps
from .turn_end import repair, turn_result

log = logging.getLogger(__name__)

_COUNTED = frozenset({TurnEnd.COMPLETED, TurnEnd.INTERRUPTED})
"""How a user turn ends to count towards the next background review."""


@attrs.define(slots=True, kw_only=True)
class RunningTurn:
    """The session's running turn: its task, the handle it steers it by, who waits."""

    number: int
    task: TaskChild[TurnDone]
    start: tuple[int, Message | None]
    """The transcript's length before the turn and its last message (a rollback's target)."""
    handle: TurnHandle
    waiters: list[Reply]
    from_user: bool
    """A person's prompt (not machine input, not a compaction job): counts toward reviews."""


_START = StartTurn()


class TurnOwner(Actor):
    """Starts, stops and ends a session's turns (see the module docstring)."""

    config: SessionConfig
    deps: SessionDeps
    session_id: str | None
    conversation: Conversation
    hub: ev.EventHub
    queue: InputQueue
    approvals: ApprovalBroker
    keeper: ContextKeeper
    prompts: PromptRecord
    reviews: ReviewHost
    goals: GoalKeeper
    processes: ProcessService
    tools: SessionTools
    _watch_key: object
    tools_ctx: ToolContext
    turn_number: int
    usage: Usage
    context_used: int
    _running: RunningTurn | None
    _closed: bool

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
                running.handle.steer(item.text)
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
        self._sync_tools()  # a change whose notice is still in the mailbox (or was lost)
        handle, inbox = turn_link(self.config.steer_capacity)
        deps = TurnDeps(
            config=self.config,
            client=self.deps.client,
            keeper=self.keeper.copy(),  # the turn's own (tools too), given back in its TurnDone
            hub=self.hub,
            tools_ctx=self.tools_ctx,
            approvals=self.approvals,
        )
        before = (self.conversation.next_seq, self.conversation.last)
        actor = TurnActor(number, prompt, deps, self.conversation.copy(), inbox, start)
        task = await TaskChild.start(self.ctx, actor, name=f"turn-{number}", monitored=True)
        self._running = RunningTurn(
            number=number,
            task=task,
            start=before,
            handle=handle,
            waiters=[item.waiter] if item is not None and item.waiter is not None else [],
            from_user=item is not None and item.delivered is None,
        )
        if item is not None:
            await self._delivered(item.delivered)
        return number

    async def _stop_turn(self, reason: str, *, rollback: bool = False) -> TurnResult | None:
        """Hard-cancel the running turn; returns once it is settled and the session idle."""
        running = self._running
        if running is None:
            return None
        self.approvals.deny_all()
        await running.task.ref.kill(ExitReason.cancelled(by=self.ctx.path, detail=reason))
        return await self._turn_ended(rollback=rollback, resume_queue=False)

    async def _turn_ended(self, *, rollback: bool = False, resume_queue: bool = True) -> TurnResult:
        running = self._running
        assert running is not None
        self._running = None
        done = await turn_result(running.number, running.task)
        result = done.result
        if result.reason is TurnEnd.INTERRUPTED and not result.detail:
            result = attrs.evolve(result, detail=running.handle.reason)  # why it was sent
        self.conversation.adopt(done.messages, dirty=done.dirty)
        if done.keeper is not None:
            self.keeper = done.keeper
        self._after_turn_asks(running)
        self.usage = self.usage + result.usage
        self.context_used = result.context_used or self.context_used
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + self.config.store_timeout
            if running.task.ref.is_alive:
                # Reported unkillable: it may still settle, and must not write over
                # the transcript the session carries on with (its epoch goes stale).
                await self._claim_transcript(running.number)
            back = running.start if rollback else None
            result = await repair(self.conversation, self.keeper, self.hub, result, back)
        self.queue.hand_back([*result.undelivered, *running.handle.leftovers()])
        for waiter in running.waiters:
            waiter.send(result)
        self.hub.publish(
            ev.TurnCompleted(
                result.turn, result.reason.value, result.detail, result.iterations, result.text
            )
        )
        await self.goals.turn_ended(result.turn, result.reason.value, result.text)
        if resume_queue:
            await self._next_input()
        # A compaction may have rebuilt the prompt, a switched server changed the tools.
        await self.prompts.keep(self.keeper.system, self.keeper.offered())
        self.reviews.count_tools(result.iterations, self.conversation.messages[result.first_seq :])
        # Seed #261: every user turn counts, an interrupted one too.
        counted = running.from_user and result.reason in _COUNTED
        due = counted and self.reviews.turn_completed() and self._idle()
        if due and not self.reviews.schedule(self.ctx, result.turn):
            await self._start_review(result.turn)
        return result

    def _after_turn_asks(self, running: RunningTurn) -> None:
        """What the turn left of the session's requests is the session's again: a
        ``/compress`` waits for the next request; a tool set it did not take is applied."""
        for ask in running.handle.leftover_asks():
            if isinstance(ask, CompressAsk):
                self.keeper.request(ask.focus)
        self._sync_tools()

    def _sync_tools(self) -> bool:
        """Watch the shared registry again, then bring the keeper (and a running turn) to
        the view's tool set if it changed: its snapshot, and the stable tier of the system
        prompt rebuilt for it (the tool list changed, so the cached prefix is new anyway;
        the other tiers stay). Whether it changed."""
        self.tools.watch(self._watch_key, registry_sink(self.ctx.self, str(self.session_id)))
        snapshot = self.tools.snapshot()
        if snapshot is self.keeper.tool_set:
            return False
        self.keeper.retool(snapshot)
        running = self._running
        if running is not None:  # the turn's keeper is its own: tell it
            running.handle.tools_changed(snapshot, self.keeper.system[0])
        return True

    async def _claim_transcript(self, number: int) -> None:
        try:
            await self.conversation.claim()
        except StoreError as error:
            self.conversation.dirty = True
            self.hub.publish(ev.ErrorOccurred(number, "store", str(error)))
            log.warning(
                "session %s: could not fence off turn %d: %s", self.session_id, number, error
            )

    def _idle(self) -> bool:
        """No turn, nothing queued, not closed: when a background review may run."""
        return (
            self._running is None
            and not self._closed
            and not len(self.queue)
            and not self.conversation.dirty
        )

    async def _refine(self, focus: str) -> Accepted:
        """``/refine [focus]``: a review of all there is, now (seed #274); only when idle."""
        if not self.reviews.reviewable:
            raise InvalidInput("/refine: this session has neither memory nor skills to review")
        if not self._idle():
            raise SessionBusy(f"session {self.session_id} is busy; /refine runs when it is idle")
        await self._start_review(self.turn_number, focus=focus)
        return Accepted("reviewing", self.turn_number)

    async def _start_review(self, turn: int, *, focus: str | None = None) -> None:
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
            tools=self.keeper.tools,
            transcript=tuple(self.conversation.messages),
            cwd=config.cwd,
            spill_dir=config.spill_dir,
            thinking_budget=config.thinking_budget,
            focus=focus,
        )

    async def _charge_usage(self, usage: Usage) -> None:
        """Work besides turns (a background review) is charged to the session too."""
        assert self.session_id is not None
        await self.deps.store.add_usage(self.session_id, usage)
        self.usage = self.usage + usage

    async def _next_input(self) -> None:
        if self._running is None and not self._closed:
            item = self.queue.pop()
            if item is not None:
                await self._start_turn(item)
