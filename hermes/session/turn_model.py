"""The model side of a turn: one reply through the ladders, its events, its commits.

``TurnModel`` is the part of ``TurnActor`` (``turn.py``) that talks to the
model. ``_reply`` asks for one reply and walks the reply ladders
(``ladders.py``: cut, empty and looping replies) until one is accepted or the
ladders end the turn. ``_model_call`` sends one request: steers delivered
and the context kept first, reissued after a redirect, and parked for
auto-recovery cycles when the provider keeps failing
(``hermes.model.recovery``; each wait is a ``RecoveryWaiting`` event, and a
soft interrupt or redirect ends it at once, since it runs inside the
request's scope). While a reply streams, ``RunawayWatch`` cuts a text or a
tool call's arguments that run away into repetition. What a reply cut by a
redirect or an interrupt leaves in the transcript is ``crossed.py``'s (seed #154).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import trio

from actors import ActorContext
from hermes.model import (
    AttemptFailed,
    Message,
    ModelError,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    TextBlock,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from hermes.model.recovery import RecoveryWait, complete_recovering
from hermes.model.repetition import RunawayWatch

from . import events as ev
from .batch import steer_block
from .control import CompressAsk, ToolsChanged, TurnInbox
from .conversation import Conversation
from .crossed import (
    LOOPED,
    PLACEHOLDER,
    REDIRECT_MARK,
    REDIRECT_RESTARTS,
    CrossedReply,
    correction,
    looped,
)
from .ladders import (
    CONTINUE_NUDGE,
    EMPTY_NUDGE,
    HOUSEKEEPING,
    THINKING_NUDGE,
    Accept,
    Answer,
    Continue,
    Feed,
    GiveUp,
    Nudge,
    ReplyLadder,
    Retry,
    Runaway,
    Salvage,
)
from .outcome import TurnEnd

if TYPE_CHECKING:
    from .turn import TurnDeps


class TurnModel:
    """The model calls of a turn (see the module docstring); ``TurnActor`` is one."""

    number: int
    deps: TurnDeps
    conv: Conversation
    controls: TurnInbox
    undelivered: list[str]
    compacted: bool
    ctx: ActorContext
    _iterations: int
    _usage: Usage
    _partial: list[str]
    _end: TurnEnd | None
    _detail: str
    _final_text: str

    def _init_model(self) -> None:
        self._prefix = ""
        """Text of cut replies continued in this step (the answer starts with it)."""
        self._said = ""
        """The turn's latest visible reply text, and the tools called since it."""
        self._tools_since: set[str] = set()
        self._text_seen = False
        """Answer text reached the user: a failing provider no longer parks the turn."""
        self._text_watch = RunawayWatch()
        self._tool_watch = RunawayWatch()
        self._runaway: Runaway | None = None
        self._voided = ""
        """Text an attempt of the current call streamed before it failed (and was retried)."""
        self._restarts = 0
        """Requests reissued for redirects in this turn (``REDIRECT_RESTARTS``)."""

    async def _reply(self, tool_choice: str | None = None) -> ModelResponse | None:
        """One reply through the ladders (``ladders.py``); None when they ended the turn."""
        config = self.deps.config
        ladder = ReplyLadder(
            model=config.model,
            max_tokens=config.max_tokens,
            context_window=config.context_window,
            fallback_models=self.deps.client.fallback_models,
        )
        # The transcript before the ladder's first write: what ``GiveUp`` rolls back to.
        start: tuple[int, Message | None, bool] | None = None
        self._prefix = ""
        while True:
            reply = await self._model_call(tool_choice, ladder)
            if reply is None:
                self._end = TurnEnd.INTERRUPTED
                return None
            last = self.conv.last
            verdict = ladder.judge(
                reply,
                earlier_text=self._said,
                housekeeping_only=bool(self._tools_since) and self._tools_since <= HOUSEKEEPING,
                after_tools=last is not None
                and any(isinstance(b, ToolResultBlock) for b in last.content),
                streamed=self._voided,
            )
            if isinstance(verdict, Accept):
                assert isinstance(reply, ModelResponse)
                return reply
            if isinstance(verdict, Salvage):
                assert isinstance(reply, ModelResponse)
                why = "the reply was empty: the text a dropped attempt streamed stands"
                self.deps.hub.publish(ev.ReplyRecovering(self.number, "salvage", why))
                message = Message("assistant", (TextBlock(verdict.text),))
                return attrs.evolve(reply, message=message, stop_reason="end_turn")
            if isinstance(reply, ModelResponse) and not isinstance(verdict, Continue | Feed):
                self._usage = self._usage + reply.usage  # dropped, but paid for
            action = type(verdict).__name__.lower()
            if start is None and isinstance(verdict, Continue | Feed | Nudge):
                start = (self.conv.next_seq, self.conv.last, self.compacted)
            match verdict:
                case Continue() | Feed():
                    assert isinstance(reply, ModelResponse)
                    await self._commit_reply(reply)
                    self._prefix = "".join(ladder.continued)
                    cut = isinstance(verdict, Continue)
                    await self.conv.add_user_blocks(
                        [TextBlock(CONTINUE_NUDGE if cut else THINKING_NUDGE)]
                    )
                    why = (
                        "the reply was cut at the output limit: continuing"
                        if cut
                        else "the reply held only thinking: fed back"
                    )
                case Nudge():
                    await self.conv.add_user_blocks([TextBlock(EMPTY_NUDGE)])
                    why = "the reply was empty: nudged"
                case Retry(why=why):
                    pass
                case Answer(text=text):
                    self._final_text, self._end = text, TurnEnd.COMPLETED
                    self._detail = "an empty reply after housekeeping: the earlier text stands"
                    return None
                case GiveUp(reason=reason, detail=detail):
                    if start is not None and self.compacted == start[2]:
                        await self.conv.rollback_to(start[0], start[1])  # rows still there
                    self._end, self._detail, self._final_text = TurnEnd.FAILED, detail, ""
                    self.deps.hub.publish(ev.ErrorOccurred(self.number, reason, detail))
                    return None
            self.deps.hub.publish(ev.ReplyRecovering(self.number, action, why))

    def _request(self, tool_choice: str | None, ladder: ReplyLadder) -> ModelRequest:
        config = self.deps.config
        return ModelRequest(
            model=ladder.model,
            messages=tuple(self.conv.messages),
            max_tokens=ladder.max_tokens,
            system=self.deps.keeper.system,
            tools=self.deps.keeper.offered(),
            thinking_budget=config.thinking_budget,
            tool_choice=tool_choice,  # type: ignore[arg-type]
        )

    async def _keep_context(self, overflow: bool = False) -> bool:
        """Compact if due (or after a context overflow); whether the transcript changed."""
        keeper = self.deps.keeper
        self._take_asks()
        with self.controls.hold_interrupt():
            if overflow:
                done = await keeper.after_overflow(self.conv, self.ctx, self.number)
            else:
                done = await keeper.before_request(self.conv, self.ctx, self.number)
        self._take_asks(answered=done is not None)
        if done is None:
            return False
        self.compacted = True
        self._usage = self._usage + done.usage  # the summary call is part of the turn's cost
        return True

    def _take_asks(self, *, answered: bool = False) -> None:
        """Apply the session's requests to the turn's keeper: a changed tool list, and a
        ``/compress`` (``answered``: a compaction just committed, which answers it)."""
        keeper = self.deps.keeper
        for ask in self.controls.take_asks():
            match ask:
                case CompressAsk(focus=focus):
                    if not answered:
                        keeper.request(focus)
                case ToolsChanged(tools=tools, stable=stable):
                    keeper.retool(tools, stable)

    async def _model_call(
        self, tool_choice: str | None, ladder: ReplyLadder
    ) -> ModelResponse | Runaway | None:
        """One reply, reissued after each redirect; None when interrupted; ``Runaway``
        when the stream was cut for repetition."""
        while True:
            await self._deliver_steers()
            if not self.controls.interrupted:
                await self._keep_context()
                await self._deliver_steers()  # any that came while it compacted (or tried to)
            if self.controls.interrupted:
                return None
            request = self._request(tool_choice, ladder)
            self._partial, self._voided = [], ""
            self._watch_reset()
            self.deps.hub.publish(ev.MessageStarted(self.number, self._iterations))
            with trio.CancelScope() as scope:
                try:
                    with self.controls.requesting(scope):
                        response = await complete_recovering(
                            self.deps.client,
                            request,
                            self._on_model_event,
                            self.deps.config.recovery,
                            may_park=lambda: not self._text_seen,
                            on_wait=self._on_recovery_wait,
                        )
                except ModelError as error:
                    if error.hints.should_compress and await self._keep_context(overflow=True):
                        continue  # compacted: the same request again, shorter
                    raise
            crossed = [] if scope.cancelled_caught else self._crossed()
            if not scope.cancelled_caught and not crossed:
                self._partial = []
                return response
            if crossed:  # the reply finished as a redirect came: dropped, but paid for
                self._usage = self._usage + response.usage
            runaway, self._runaway = self._runaway, None
            redirects = crossed or self.controls.take_redirects()
            calm = not redirects and not self.controls.interrupted
            if runaway is not None and calm:
                self._partial = []  # a loop is dropped, never kept
                return runaway
            text_loop = runaway is not None and not runaway.tool
            if not redirects or self.controls.interrupted:
                await self._keep_interrupted(text_loop)
                self.undelivered.extend(redirects)
                return None
            if not await self._keep_redirected("\n".join(redirects), text_loop):
                self.undelivered.extend(redirects)
                return None

    def _on_model_event(self, event: ModelEvent) -> None:
        hub = self.deps.hub
        if isinstance(event, TextDelta):
            self._partial.append(event.text)
            self._text_seen = self._text_seen or bool(event.text.strip())
            hub.publish(ev.TextDelta(self.number, event.text))
            if self._text_watch.feed(event.text):
                self._cut_runaway(Runaway(tool=False))
        elif isinstance(event, ToolInputDelta):
            if self._tool_watch.feed(event.partial_json):
                self._cut_runaway(Runaway(tool=True))
        elif isinstance(event, ThinkingDelta):
            hub.publish(ev.ThinkingDelta(self.number, event.thinking))
        elif isinstance(event, AttemptFailed):
            voided = "".join(self._partial)
            self._voided = voided if voided.strip() else self._voided
            self._partial = []
            self._watch_reset()
            hub.publish(ev.RequestRetried(self.number, event.attempt, event.reason, event.delay))

    def _cut_runaway(self, runaway: Runaway) -> None:
        scope = self.controls.request_scope
        if scope is not None and self._runaway is None:
            self._runaway = runaway
            scope.cancel()

    def _watch_reset(self) -> None:
        self._text_watch.reset()
        self._tool_watch.reset()
        self._runaway = None

    def _on_recovery_wait(self, wait: RecoveryWait) -> None:
        self.deps.hub.publish(
            ev.RecoveryWaiting(self.number, wait.cycle, wait.cycles, wait.delay, wait.reason)
        )

    async def _commit_reply(self, response: ModelResponse, *, allow_tools: bool = True) -> None:
        content = response.message.content
        if not allow_tools:
            content = tuple(b for b in content if not isinstance(b, ToolUseBlock))
        if not content:
            content = (TextBlock("(no reply)"),)
        message = Message("assistant", content)
        seq = await self.conv.append(message, usage=response.usage)
        self._usage = self._usage + response.usage
        self._final_text = self._prefix + message.text()
        if message.text().strip():
            self._said, self._tools_since = self._final_text, set()
        hub = self.deps.hub
        hub.publish(
            ev.MessageCompleted(
                self.number,
                seq,
                "assistant",
                self._final_text,
                response.stop_reason,
                len(message.tool_uses()),
            )
        )
        keeper = self.deps.keeper
        context = keeper.observe(response.usage, self.conv.next_seq)
        self.controls.context_used = context  # the turn's own (its tools get a TurnUsage)
        hub.publish(
            ev.UsageUpdated(
                self.number, response.usage, self._usage, context, keeper.percent(context)
            )
        )

    def _crossed(self) -> list[str]:
        """The redirects that came as the reply finished (too late to cut it). Hermes
        drops that reply and rebuilds from the correction; ``MARKED`` (and an interrupted
        turn) leaves them in the steer channel, where the next seam takes them as steers."""
        if self.deps.config.crossed_reply is CrossedReply.MARKED or self.controls.interrupted:
            return []
        return self.controls.take_redirects()

    async def _keep_interrupted(self, text_loop: bool) -> None:
        """A soft interrupt cut the reply: keep what was streamed (``crossed.py``)."""
        if self.deps.config.crossed_reply is CrossedReply.MARKED:
            await self._commit_partial("interrupted")
            return
        visible = "".join(self._partial).strip()
        self._partial = []
        if not visible or not self.conv.ends_with("user"):
            return
        if looped(visible, text_loop):
            await self.conv.append(Message("assistant", (TextBlock(PLACEHOLDER),)))
            self._final_text = LOOPED  # the loop itself is never shown again
            return
        seq = await self.conv.append(Message("assistant", (TextBlock(visible),)))
        self._final_text = visible
        hub = self.deps.hub
        hub.publish(ev.MessageCompleted(self.number, seq, "assistant", visible, "interrupted", 0))

    async def _keep_redirected(self, text: str, text_loop: bool) -> bool:
        """A redirect cut the reply: keep it and add the correction (``crossed.py``);
        False when the turn has reissued its requests ``REDIRECT_RESTARTS`` times."""
        hub = self.deps.hub
        if self.deps.config.crossed_reply is CrossedReply.MARKED:
            await self._commit_partial("redirected")
            seq = await self.conv.add_user_blocks([TextBlock(REDIRECT_MARK.format(text=text))])
            hub.publish(ev.SteerDelivered(self.number, text, seq))
            return True
        visible = "".join(self._partial).strip()
        self._partial = []
        self._restarts += 1
        if self._restarts > REDIRECT_RESTARTS:
            self._detail = (
                f"the request was redirected more than {REDIRECT_RESTARTS} times: "
                "the correction runs as the next turn"
            )
            return False
        loop = bool(visible) and looped(visible, text_loop)
        if loop:
            visible = ""
        if self.conv.ends_with("user"):  # always, before a request: alternation holds
            kept = visible or PLACEHOLDER
            seq = await self.conv.append(Message("assistant", (TextBlock(kept),)))
            if visible:
                self._final_text = visible
                hub.publish(
                    ev.MessageCompleted(self.number, seq, "assistant", visible, "redirected", 0)
                )
        said = correction(text, visible, loop)
        seq = await self.conv.add_user_blocks([TextBlock(said)])
        hub.publish(ev.SteerDelivered(self.number, text, seq))
        return True

    async def _commit_partial(self, marker: str, unattended: bool = False) -> None:
        """Keep text already streamed as an assistant message marked ``[marker]``.

        ``unattended``: the turn was killed from outside its session (the session is
        going down, or someone killed the turn by hand), so nothing will act on the
        write's result: it is queued without waiting for the store's reply, in order
        before anything written after it, and the store logs it if it fails.
        """
        text = "".join(self._partial)
        self._partial = []
        if not text.strip() or not self.conv.ends_with("user"):
            return
        message = Message("assistant", (TextBlock(f"{text}\n\n[{marker}]"),))
        seq = self.conv.submit_append(message) if unattended else None
        if seq is None:
            seq = await self.conv.append(message)
        self._final_text = text
        self.deps.hub.publish(ev.MessageCompleted(self.number, seq, "assistant", text, marker, 0))

    async def _deliver_steers(self) -> None:
        """Pending steers go into the trailing user message, before the next request."""
        steers = self.controls.take_steers()
        if not steers:
            return
        try:
            seq = await self.conv.add_user_blocks([steer_block(s) for s in steers])
        except BaseException:
            self.undelivered.extend(steers)
            raise
        for text in steers:
            self.deps.hub.publish(ev.SteerDelivered(self.number, text, seq))
