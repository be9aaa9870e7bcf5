"""The turn: one prompt's loop of model calls and tool batches, as a one-shot task.

The session spawns one ``TurnActor`` (an ``actors.Task``) per turn with a
working copy of its conversation, which the turn owns and writes through; the
transcript it ends with comes back in its task's value (``TurnDone``).
The loop: deliver pending steers, call the model, persist the reply; if it
asked for tools, run the batch (``TurnBatches``, ``batch.py``: each call in a
tool worker, the results and any steers persisted in the same user message),
and go round again, until the model answers without tools, the iteration
budget is spent (one final tool-less call), a guardrail halts the turn, or it
is interrupted. Each reply first goes through the reply ladders (cut, empty
and looping replies) and a failing provider through auto-recovery cycles:
the model side is ``TurnModel`` (``turn_model.py``). Its tools are a value:
the ``ToolSnapshot`` its keeper holds, replaced by the session's
``ToolsChanged`` messages before a request; a batch runs with the set its
reply's request offered (a tool removed since is called through what it was
given, and answers for itself: an MCP tool whose server is gone says so).

Before each request the session's ``ContextKeeper`` may compact the
transcript (threshold reached, ``/compress`` asked for, or the provider said
the prompt is too long, after which the request is retried); a new prompt
does not soft-interrupt a compaction in flight. The same actor also runs an
idle session's ``/compress`` on its own (``StartCompaction``), so the
session's mailbox stays free for a cancel while the summary call runs.

Whatever ends the turn (its own end, a soft interrupt, a hard kill, an
error), ``_settle`` runs in a shielded, time-bounded scope and leaves a valid
transcript: text already streamed is kept and marked, every requested tool
call has exactly one result, and nothing the store lacks is kept in memory.
The ``TurnDone`` (its ``TurnResult`` and transcript) is the task's result
(``TaskRef.result``), which the session takes when a monitor tells it the turn
exited. A killed turn still settles and returns it all the same (a kill is
level-triggered: the exit stays the kill's); a crashed one raises
``TurnCrashed`` carrying it. The steers it could not deliver and whether it
compacted are in the ``TurnResult``; why its session killed it is the kill's
reason (``ActorContext.kill_reason``). Nothing of the session's is written
here but through the copy, whose writer epoch goes stale if the session
leaves the turn behind.
"""

from __future__ import annotations

import attrs
import trio

from actors import ExitKind, MailboxConfig, Overflow, Task
from hermes.model import ModelClient, ModelError, TextBlock, Usage
from hermes.stopgates import LateChecks, StopGates, StopNudged
from hermes.store import StoreError
from hermes.tools import ToolContext

from . import events as ev
from .approvals import ApprovalBroker
from .batch import TurnBatches
from .config import SessionConfig
from .context_keeper import ContextKeeper
from .control import TurnInbox
from .conversation import Conversation, text_of
from .outcome import TurnCrashed, TurnDone, TurnEnd, TurnResult
from .turn_model import TurnModel


@attrs.frozen(slots=True)
class TurnDeps:
    """What a turn works with: values, shared immutable services, and its own copies."""

    config: SessionConfig
    client: ModelClient
    keeper: ContextKeeper
    """System prompt, context meter and compaction: the turn's own copy, given back in
    its ``TurnDone``. Its ``tool_set`` (a ``ToolSnapshot``) is what the turn offers and
    runs; a change comes as a ``ToolsChanged`` message, applied before the next request."""
    hub: ev.EventHub
    tools_ctx: ToolContext
    approvals: ApprovalBroker


@attrs.frozen(slots=True)
class StartTurn:
    """Run the turn's prompt."""


@attrs.frozen(slots=True)
class StartCompaction:
    """Run no prompt: compact the idle session's transcript (``/compress``), then end."""

    focus: str | None = None


BUDGET_NOTE = (
    "[The iteration budget of {n} tool-using steps for this turn is spent. Do not call "
    "tools. Answer now: summarise what was done, what was found, and what remains.]"
)


class TurnActor(TurnModel, Task[TurnDone]):
    """Runs one turn (or, with ``StartCompaction``, an idle ``/compress``); see the module
    docstring."""

    shutdown_budget = 0.0  # a stop request means now: the turn settles in its shielded step
    mailbox = MailboxConfig(capacity=4, overflow=Overflow.FAIL)

    def __init__(
        self,
        number: int,
        prompt: tuple[TextBlock, ...],
        deps: TurnDeps,
        conversation: Conversation,
        controls: TurnInbox,
        start: StartTurn | StartCompaction,
    ) -> None:
        self.number = number
        self.prompt = prompt
        self.deps = deps
        self.conv = conversation
        self.controls = controls
        self.start = start
        self.undelivered: list[str] = []
        """Steers it could not deliver (given back in its ``TurnResult``)."""
        self.compacted = False
        self._settled: TurnResult | None = None
        self.first_seq = conversation.next_seq
        self._iterations = 0
        self._usage = Usage()
        self._partial: list[str] = []
        self._batches: TurnBatches | None = None
        self._end: TurnEnd | None = None
        self._detail = ""
        self._final_text = ""
        self._failure: BaseException | None = None
        self._init_model()
        checks = deps.tools_ctx.services.get(LateChecks)
        self._stops = StopGates(
            deps.config.stops,
            checks if isinstance(checks, LateChecks) else None,
            cwd=deps.tools_ctx.cwd,
            env=deps.tools_ctx.env,
        )

    # -- the task ------------------------------------------------------------------------

    async def run(self) -> TurnDone:
        """The turn's body; its ``TurnDone`` (result and transcript) however it ends.

        A killed turn (cancelled) still settles and returns how (the kill is
        level-triggered: it goes on at the next checkpoint, and a value returned
        before the exit stands, ``actors.Task``); a crash settles too and raises
        ``TurnCrashed`` carrying the result.
        """
        self.deps.approvals.turn = self.number
        failure: BaseException | None = None
        try:
            await self._body()
        except BaseException as exc:
            failure = self._failure = exc
        try:
            with trio.CancelScope(shield=True) as scope:
                scope.deadline = trio.current_time() + self.deps.config.settle_timeout
                await self._settle()
        finally:
            # Its traceback's frames hold this actor: kept, every cancelled turn
            # (stream, cell, mailbox, ~300 objects) was garbage only the cyclic
            # collector could free, behind the daemon's young-generation pauses.
            self._failure = None
        settled = self._settled
        assert settled is not None  # ``_record`` runs in the settle step's ``finally``
        done = TurnDone(settled, tuple(self.conv.messages), self.conv.dirty, self.deps.keeper)
        if failure is not None and not _only_cancelled(failure):
            raise TurnCrashed(done) from failure
        failure = None
        return done

    async def _body(self) -> None:
        start = self.start
        if isinstance(start, StartCompaction):
            await self._compact_only(start.focus)
        else:
            self._batches = TurnBatches(
                self.number, self.deps, self.conv, self.controls, self.ctx, self.undelivered
            )
            await self._run()

    # -- the loop ------------------------------------------------------------------------

    async def _run(self) -> None:
        config = self.deps.config
        self.deps.hub.publish(ev.TurnStarted(self.number, text_of(self.prompt)))
        self.deps.keeper.begin_turn()
        try:
            self.first_seq = await self.conv.add_user_blocks(self.prompt)
            while self._end is None:
                if self.controls.interrupted:
                    self._end = TurnEnd.INTERRUPTED
                elif self._iterations >= config.max_iterations:
                    await self._final_summary()
                else:
                    await self._step()
        except (ModelError, StoreError) as error:
            self._end = TurnEnd.FAILED
            self._detail = str(error)
            reason = error.reason.value if isinstance(error, ModelError) else "store"
            self.deps.hub.publish(ev.ErrorOccurred(self.number, reason, str(error)))

    async def _compact_only(self, focus: str | None) -> None:
        """An idle session's ``/compress``: no prompt, no model reply, one compaction."""
        self.deps.hub.publish(ev.TurnStarted(self.number, "/compress"))
        try:
            with self.controls.hold_interrupt():
                done = await self.deps.keeper.compact(
                    self.conv, self.ctx, self.number, "request", focus=focus, forced=True
                )
            self._take_asks(answered=done is not None)
        except StoreError as error:
            self._end, self._detail = TurnEnd.FAILED, str(error)
            return
        self._end = TurnEnd.COMPLETED
        if done is None:
            self._detail = "nothing was compacted"
            return
        self.compacted = True
        self._usage = self._usage + done.usage
        self._detail = (
            f"compacted {done.messages_before} messages ({done.tokens_before} tokens) into "
            f"{done.messages_after} ({done.tokens_after} tokens): {done.detail}"
        )

    async def _step(self) -> None:
        response = await self._reply()
        if response is None:
            return
        await self._commit_reply(response)
        uses = response.message.tool_uses()
        if not uses:
            await self._stop_gate()
            return
        self._iterations += 1
        self._tools_since.update(u.name for u in uses)
        batches = self._batches
        assert batches is not None
        try:
            await batches.run(uses, response.malformed_inputs)
        finally:
            if batches.stop is not None and self._end is None:
                self._end, self._detail = batches.stop

    async def _stop_gate(self) -> None:
        """The final answer passes the stop gates (``hermes.stopgates``), or the turn goes on
        with a gate's nudge as the next user message (the answer stays, as an interim one)."""
        messages = self.conv.messages[self.first_seq :]
        offered = bool(self.deps.keeper.tools)
        nudge = await self._stops.check(self._final_text, messages, offered)
        if nudge is None:
            self._end = TurnEnd.COMPLETED
            return
        await self.conv.add_user_blocks([TextBlock(nudge.text)])
        self.deps.hub.publish(StopNudged(self.number, nudge.gate, nudge.text))

    async def _final_summary(self) -> None:
        budget = self.deps.config.max_iterations
        await self.conv.add_user_blocks([TextBlock(BUDGET_NOTE.format(n=budget))])
        response = await self._reply(tool_choice="none")
        if response is None:
            return
        await self._commit_reply(response, allow_tools=False)
        self._end = TurnEnd.MAX_ITERATIONS
        self._detail = f"the iteration budget of {budget} was spent"

    # -- the end -------------------------------------------------------------------------

    async def _settle(self) -> None:
        """Leave the transcript valid whatever happened; record the outcome (shielded)."""
        cancel_reason = self._cancel_reason()
        cancelled = self._end is None and cancel_reason is not None
        reason = cancel_reason or "the turn stopped"
        self.deps.approvals.deny_all()
        try:
            if self.conv.dirty:
                await self.conv.resync()
            batches = self._batches
            if batches is not None and batches.collector is not None:
                collector, batches.collector = batches.collector, None
                collector.stop_reason = reason
                await batches.write_results(collector.results(), [])
            elif self._partial:
                from_above = not cancelled and _only_cancelled(self._failure)
                hard = cancelled or from_above  # killed by anyone
                await self._commit_partial("cancelled" if hard else "interrupted", from_above)
            await self.conv.close_open_uses(reason)
        except (StoreError, trio.Cancelled) as error:
            # The store failed or the settle bound passed: the session resyncs and repairs.
            self.conv.dirty = True
            if self._end is None or self._end is TurnEnd.COMPLETED:
                self._detail = f"the transcript could not be settled: {error}"
            if isinstance(error, trio.Cancelled):
                raise
        finally:
            redirects = self.controls.take_redirects()  # the steers wait in order behind
            self.undelivered.extend(self.controls.take_steers())
            self.undelivered.extend(redirects)
            self._record(cancel_reason if cancelled else None)

    def _cancel_reason(self) -> str | None:
        """Why its session killed it: the words of the kill's reason (``_stop_turn``)."""
        kill = self.ctx.kill_reason
        if kill is not None and kill.kind is ExitKind.CANCELLED and kill.detail:
            return kill.detail
        return None

    def _record(self, cancelled: str | None) -> None:
        if cancelled is not None:
            end, detail = TurnEnd.CANCELLED, cancelled
        elif self._end is None and _only_cancelled(self._failure):
            end, detail = TurnEnd.CANCELLED, "the turn was killed (by hand, or its session stops)"
        elif self._end is None:
            failure = self._failure
            why = f"{type(failure).__name__}: {failure}" if failure is not None else "unknown"
            end, detail = TurnEnd.FAILED, self._detail or f"the turn crashed: {why}"
        else:
            end, detail = self._end, self._detail
        self._settled = TurnResult(
            self.number,
            end,
            self._final_text,
            detail,
            self._iterations,
            self._usage,
            self.first_seq,
            tuple(self.undelivered),
            self.compacted,
            self.controls.context_used,
        )


def _only_cancelled(error: BaseException | None) -> bool:
    if isinstance(error, trio.Cancelled):
        return True
    if isinstance(error, BaseExceptionGroup):
        return all(_only_cancelled(e) for e in error.exceptions)
    return False
