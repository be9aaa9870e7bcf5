"""Keeps a session's context inside its window: the system prompt, the token meter, compaction.

One ``ContextKeeper`` per session, owned as the conversation is: a running
turn works on its own ``copy()`` (made at its spawn) and gives it back in its
task's value, which the session adopts; what the session asks of it meanwhile
(``/compress``, a changed tool list) reaches the turn as messages
(``control.py``). Only its owner calls it, so no lock is needed. It holds the
tool set the prompt is built for (``tool_set``, a ``ToolSnapshot``): what a
turn offers and runs.

- **Measuring:** after each reply the real prompt size is anchored
  (``observe``); in between, what was appended since is estimated. Each
  reply's ``UsageUpdated`` carries it as a percentage of the window; a
  compaction publishes ``ContextUsage`` with the estimate after it.
- **When:** before each model request, once the size reaches the threshold
  (``CompressionSettings``: 50 % of the window minus the output reservation,
  at least 75 % on a window under 512K), unless the policy holds off
  (anti-thrash, attempts per turn, the hold after an aborted compaction);
  after a context-overflow error from the provider; and on request
  (``/compress``, with an optional focus), which bypasses the policy and the
  summary cooldown.
- **How:** the plan (prune old tool results, protect head and tail, never split
  a tool pair) comes from ``hermes.compression``; the middle is summarised by
  a ``Compressor`` task spawned under the owner (a ``TaskChild``: its crash
  is a failed summary), so cancelling the owner cancels the summary call. A
  failed summary on an auxiliary model is retried once on the session's model
  (which then writes the session's summaries); a network, closed-stream,
  access, truncated or empty failure then aborts the compaction with every
  message kept, any other (or an automatic one during the cooldown after
  failures) is replaced by the deterministic static summary
  (``hermes.compression.failures``).
- **Kept:** a compaction that changed the summary-failure state (a failure
  started or climbed a cooldown, a model summary cleared it) writes it on the
  session's row (``cooldown_record.py``), so a restart keeps the cooldown.
- **Commit:** replacing the rows (the store archives the old ones), rebuilding
  the system prompt (the memory snapshot is re-read) and resetting the meter is
  one shielded, time-bounded step: the transcript is never half-compacted.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence

import attrs
import trio

from actors import ActorContext, ExitReason
from hermes.compression import (
    CompactionPlan,
    CompressionPolicy,
    CompressionSettings,
    ContextMeter,
    FailureState,
    estimate_tokens,
    finish_plan,
    plan_compaction,
    threshold_tokens,
    validate_transcript,
)
from hermes.compression.actor import Compressor, SummaryResult
from hermes.model import Message, ModelClient, TextBlock, ToolSpec, Usage
from hermes.store import CompactionRecord, StoreError
from hermes.tools import ToolRegistry, ToolSnapshot

from . import events as ev
from .conversation import Conversation
from .cooldown_record import keep_cooldown
from .prompt_record import pinned_order
from .task_child import TaskChild

log = logging.getLogger(__name__)

SystemBuilder = Callable[[ToolRegistry], tuple[TextBlock, ...]]
"""Builds the system prompt for a tool set (re-reading the memory snapshot): at start, after
a compaction, and for a changed tool set."""

SUMMARY_CALL_MARGIN = 5.0
"""Seconds beyond the summary timeout before the owner gives up on a compressor."""


@attrs.frozen(slots=True)
class Compacted:
    """A committed compaction."""

    method: str
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    archive_id: str
    detail: str
    usage: Usage = attrs.field(factory=Usage)
    """What the summary call cost (charged to the session with the commit)."""


@attrs.frozen(slots=True)
class _Summary:
    messages: tuple[Message, ...]
    method: str
    detail: str
    failed: bool = False
    """A model summary call failed (the static summary stands in for it)."""
    usage: Usage = attrs.field(factory=Usage)
    """What the summary call cost."""
    aborted: bool = False
    """The summary's failure aborts the compaction: ``messages`` is not written."""


class ContextKeeper:
    """See the module docstring."""

    def __init__(
        self,
        settings: CompressionSettings,
        *,
        client: ModelClient,
        model: str,
        context_window: int,
        max_tokens: int,
        tools: ToolSnapshot,
        hub: ev.EventHub,
        build_system: SystemBuilder,
        commit_timeout: float,
    ) -> None:
        self.settings = settings
        self.client = client
        self.model = model
        self.context_window = context_window
        self.max_tokens = max_tokens
        self.tool_set = tools
        """The tools the prompt is built for: what a turn offers and runs (a value)."""
        self.tools = tools.specs()
        self.hub = hub
        self._build = build_system
        self.commit_timeout = commit_timeout
        self.system = build_system(tools)
        """The system prompt: byte-identical between compactions, so the cached prefix holds."""
        self.meter = ContextMeter()
        self.policy = CompressionPolicy(settings)
        self.threshold = threshold_tokens(context_window, max_tokens, settings)
        self.requested: tuple[str | None] | None = None
        """A ``/compress`` (with its focus) waiting for the running turn's next step."""
        self.fell_back = False
        """An auxiliary summary failed and was retried on ``model``, which writes them now."""
        self.tool_order: tuple[str, ...] | None = None
        """A resumed session's stored tool order (seed #18; ``prompt_record.py``)."""
        self._offered: tuple[tuple[ToolSpec, ...], tuple[ToolSpec, ...]] | None = None

    def copy(self) -> ContextKeeper:
        """A keeper of its own for a turn: the same prompt and settings, its own meter
        and policy state (the immutable parts are shared)."""
        twin = copy.copy(self)
        twin.meter = copy.copy(self.meter)
        twin.policy = self.policy.copy()
        return twin

    def offered(self) -> tuple[ToolSpec, ...]:
        """The tool list to send: ``tool_set``'s, in the stored order if one is pinned."""
        live = self.tools
        if self.tool_order is None:
            return live
        if self._offered is not None and self._offered[0] is live:
            return self._offered[1]
        arranged = pinned_order(self.tool_order, live)
        self._offered = (live, arranged)
        return arranged

    def build_system(self) -> tuple[TextBlock, ...]:
        """A fresh system prompt for ``tool_set`` (the memory snapshot re-read)."""
        return self._build(self.tool_set)

    def retool(self, tools: ToolSnapshot, stable: TextBlock | None = None) -> None:
        """The tool set changed: it, and the system prompt's stable tier built for it
        (``stable``, or built here); the other tiers stay as they were."""
        self.tool_set, self.tools = tools, tools.specs()
        if stable is None:
            stable = self._build(tools)[0]
        self.system = (stable, *self.system[1:])

    # -- measuring -----------------------------------------------------------------------

    def tokens(self, messages: Sequence[Message]) -> int:
        """The prompt size if ``messages`` were sent now (real count plus estimates)."""
        return self.meter.estimate(messages, self.system, self.tools)

    def observe(self, usage: Usage, length: int) -> int:
        """Anchor on a reply (the transcript is ``length`` long with it); its context size."""
        self.meter.observe(usage, length)
        return usage.prompt_tokens + usage.output_tokens

    def percent(self, tokens: int) -> float:
        """``tokens`` as a percentage of the context window."""
        return round(100.0 * tokens / self.context_window, 1)

    def _publish_usage(self, turn: int, tokens: int, *, estimated: bool) -> None:
        percent = self.percent(tokens)
        self.hub.publish(
            ev.ContextUsage(turn, tokens, self.context_window, self.threshold, percent, estimated)
        )

    # -- deciding ------------------------------------------------------------------------

    def begin_turn(self) -> None:
        self.policy.begin_turn()

    def request(self, focus: str | None) -> None:
        """Ask for a compaction at the running turn's next step (``/compress`` while busy)."""
        self.requested = (focus,)

    async def before_request(
        self, conv: Conversation, owner: ActorContext, turn: int
    ) -> Compacted | None:
        """Compact first if asked to, or if the prompt reached the threshold."""
        if self.requested is not None:
            (focus,) = self.requested
            self.requested = None
            return await self.compact(conv, owner, turn, "request", focus=focus, forced=True)
        if not self.settings.enabled:
            return None
        tokens = self.tokens(conv.messages)
        if tokens < self.threshold:
            return None
        decision = self.policy.should_compact(
            tokens, self.threshold, forced=False, now=trio.current_time()
        )
        if not decision.compact:
            return None
        return await self.compact(conv, owner, turn, "threshold")

    async def after_overflow(
        self, conv: Conversation, owner: ActorContext, turn: int
    ) -> Compacted | None:
        """The provider said the prompt is too long: compact (then the request may be retried)."""
        limit = self.settings.max_attempts_per_turn
        if self.policy.attempts >= limit:
            reason = f"already compacted {self.policy.attempts} times this turn (at most {limit})"
            self.hub.publish(ev.CompactionSkipped(turn, "overflow", reason))
            return None
        return await self.compact(conv, owner, turn, "overflow", forced=True)

    # -- compacting ----------------------------------------------------------------------

    async def compact(
        self,
        conv: Conversation,
        owner: ActorContext,
        turn: int,
        trigger: str,
        *,
        focus: str | None = None,
        forced: bool = False,
    ) -> Compacted | None:
        """Compact ``conv`` now; None (with a ``CompactionSkipped`` event) when it could not."""
        before = self.tokens(conv.messages)
        plan = plan_compaction(
            conv.messages,
            self.settings,
            context_window=self.context_window,
            max_tokens=self.max_tokens,
            focus=focus,
            forced=forced,
            current_tokens=before,
        )
        if plan is None:
            reason = "nothing to compact: the transcript is all protected head and tail"
            self.hub.publish(ev.CompactionSkipped(turn, trigger, reason))
            return None
        self.policy.note_attempt()
        failures = self.policy.failure_state()
        self.hub.publish(ev.CompactionStarted(turn, trigger, before))
        try:
            summary = await self._summarised(plan, owner, forced)
        except BaseException:  # cancelled (or a bug): nothing was written; say so, re-raise
            self.hub.publish(ev.CompactionSkipped(turn, trigger, "stopped before the commit"))
            raise
        if summary.aborted:  # every message kept; automatic compaction holds off a while
            self.policy.record_abort(trio.current_time())
            await self._charge(conv, summary.usage)
            await self._keep_failures(conv, failures)
            self.hub.publish(ev.CompactionSkipped(turn, trigger, summary.detail))
            return None
        messages, method, detail = summary.messages, summary.method, summary.detail
        problems = validate_transcript(messages)
        if problems:  # a bug in the plan: never write an invalid transcript
            log.error("compaction of %s made an invalid transcript: %s", conv.session_id, problems)
            self.hub.publish(ev.CompactionSkipped(turn, trigger, f"invalid plan: {problems[0]}"))
            return None
        system = self.build_system()  # what the next request sends (fresh memory snapshot)
        after = estimate_tokens(messages, system, self.tools)
        count = len(conv.messages)
        record: CompactionRecord | None = None
        failure = f"the commit did not answer within {self.commit_timeout:g} s"
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + self.commit_timeout
            try:
                record = await conv.compact(
                    messages,
                    method=method,
                    focus=focus,
                    tokens_before=before,
                    tokens_after=after,
                    usage=summary.usage,
                )
            except StoreError as error:
                failure = f"the commit failed: {error}"
            if record is not None:
                self.system = system
                self.meter.reset()
        if record is None:  # failed, or cut off by the bound (it may land later)
            await self._after_failed_commit(conv, messages)
            self.hub.publish(ev.CompactionSkipped(turn, trigger, failure))
            return None
        self.requested = None  # a /compress waiting for the next step is answered too
        self.policy.record(before, after, method, summary.failed, trio.current_time())
        await self._keep_failures(conv, failures)
        archive = record.archive_id
        done = Compacted(
            method, before, after, count, len(messages), archive, detail, summary.usage
        )
        self.hub.publish(
            ev.CompactionCompleted(
                turn, trigger, method, before, after, count, len(messages), archive, detail
            )
        )
        self._publish_usage(turn, after, estimated=True)
        return done

    async def _charge(self, conv: Conversation, usage: Usage) -> None:
        """Charge what an aborted compaction's summary calls cost (a commit charges its own)."""
        if usage == Usage():
            return
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + self.commit_timeout
            try:
                await conv.store.add_usage(conv.session_id, usage)
            except StoreError as error:
                log.warning("session %s: charging a summary's usage: %s", conv.session_id, error)

    async def _keep_failures(self, conv: Conversation, before: FailureState) -> None:
        """Write the summary-failure state on the session's row if it changed (shielded)."""
        state = self.policy.failure_state()
        if state == before:
            return
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + self.commit_timeout
            await keep_cooldown(conv.store, conv.session_id, state, self.commit_timeout)

    async def _after_failed_commit(self, conv: Conversation, planned: Sequence[Message]) -> None:
        """Reload the transcript after a commit that failed or did not answer (shielded).

        The store applies a compaction in one transaction, so the reload shows
        either the old rows or, if the commit landed after all, the compacted
        ones (then the system prompt is rebuilt as after any compaction). If the
        reload fails too, the conversation stays dirty and the turn's settle
        (or the session) reloads it.
        """
        self.meter.reset()
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + self.commit_timeout
            try:
                await conv.resync()
            except StoreError as error:
                log.warning(
                    "session %s: reload after a failed compaction: %s", conv.session_id, error
                )
                return
            if conv.messages == list(planned):
                self.system = self.build_system()

    async def _summarised(
        self, plan: CompactionPlan, owner: ActorContext, forced: bool
    ) -> _Summary:
        """The compacted transcript, and how its summary was made (or that it aborts).

        ``forced`` (``/compress``, an overflow) gets past the cooldown after failures."""
        if plan.prune_only:
            return _Summary(finish_plan(plan, None, "prune"), "prune", "old tool results pruned")
        if not self.policy.should_use_model(trio.current_time(), forced=forced):
            text = plan.static_summary()
            detail = "static summary (summary calls are cooling down after failures)"
            return _Summary(finish_plan(plan, text, "static"), "static", detail)
        aux = self.settings.aux_model
        model = aux if aux and not self.fell_back else self.model
        result = await self._call_compressor(plan, owner, model)
        earlier = ""
        if result.text is None and model != self.model:  # retried once on the main model
            self.fell_back = True
            earlier = f"{model} failed ({result.error}), then "
            spent = result.usage
            result = await self._call_compressor(plan, owner, self.model)
            result = attrs.evolve(result, usage=spent + result.usage)
        if result.text is not None:
            messages = finish_plan(plan, result.text, "model")
            by = f"{earlier}summarised by {self.model}" if earlier else "summarised by the model"
            return _Summary(messages, "model", by, usage=result.usage)
        failure = result.failed_as
        if self.policy.aborts(failure):
            detail = (
                f"{earlier}the summary failed ({failure.value}: {result.error}); "
                "nothing was compacted, every message is kept"
            )
            return _Summary((), "none", detail, failed=True, usage=result.usage, aborted=True)
        messages = finish_plan(plan, plan.static_summary(), "static")
        detail = f"static summary ({earlier}{result.error})"
        return _Summary(messages, "static", detail, failed=True, usage=result.usage)

    async def _call_compressor(
        self, plan: CompactionPlan, owner: ActorContext, model: str
    ) -> SummaryResult:
        compressor = Compressor(
            self.client, model, plan.summary_max_tokens, self.settings, plan.summary_prompt
        )
        task = await TaskChild.start(owner, compressor, name="compressor")
        try:
            with trio.move_on_after(self.settings.summary_timeout + SUMMARY_CALL_MARGIN):
                outcome = await task.outcome()
                if isinstance(outcome, ExitReason):
                    why = f"the compressor stopped ({outcome.describe()})"
                    return SummaryResult(None, why, model=model)
                return outcome
            return SummaryResult(None, "the compressor did not answer in time", model=model)
        finally:
            if task.ref.is_alive:  # cut short (its deadline, a cancel): stop the call now
                await task.stop()
