"""``TurnBatches``: a turn's tool batches, from the model's tool uses to the stored results.

For each reply with tool uses the turn hands the uses here: the calls run
in tool workers (``workers.py``) under the batch policy (read-only calls in
parallel, writes in parallel when their paths do not overlap, the rest in
order; a timeout per call), results are persisted as they land (coalesced
within ``FLUSH_DELAY``, so a crash loses at most the calls in flight) and
once more, complete and in call order, with any steers that came meanwhile.
Three guardrails can end the turn (``guards.py``): three batches in a row
naming only unknown tools; the same call with the same result repeated (a
large result stubbed from the 2nd, a warning in the result from the 3rd, a
halt at the 5th in a scheduled run, by default); and a batch whose
subagent-spawning calls would pass ``spawn_cap``, which does not run. While a
batch runs, ``collector`` holds it, so a turn that is stopped gives every call
of it exactly one result. A batch with a tool that ``holds_interrupt``
(``delegate_task``) holds off soft interrupts while it runs; its tools get the
context's size as a value (``TurnUsage``), never the turn's controls.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING

import attrs
import trio

from actors import ActorContext
from hermes.bell import Bell
from hermes.model import Message, TextBlock, ToolResultBlock, ToolUseBlock
from hermes.store import StoreError
from hermes.tools import (
    BatchCollector,
    BatchPolicy,
    CallStatus,
    ToolCall,
    ToolContext,
    ToolProgress,
    ToolRegistry,
    ToolResult,
    run_batch,
)

from . import events as ev
from .control import TurnInbox, TurnUsage
from .conversation import Conversation
from .guards import RepeatGuard, SpawnCap, UnknownToolStreak, Verdict, loop_halts
from .outcome import TurnEnd
from .workers import worker_invoker

if TYPE_CHECKING:
    from .turn import TurnDeps

FLUSH_DELAY = 0.05
"""Seconds a landed tool result may wait for the rest of its batch before it is persisted."""
STEER_MARK = "[Steer from the user, delivered mid-turn: {text}]"


def steer_block(text: str) -> TextBlock:
    """A steer as the marked text the model sees in a user message."""
    return TextBlock(STEER_MARK.format(text=text))


class TurnBatches:
    """Runs one turn's tool batches (see the module docstring)."""

    def __init__(
        self,
        number: int,
        deps: TurnDeps,
        conversation: Conversation,
        controls: TurnInbox,
        spawner: ActorContext,
        undelivered: list[str],
    ) -> None:
        self.number = number
        self.deps = deps
        self.conv = conversation
        self.controls = controls
        self.spawner = spawner
        """The turn's context: tool workers are its children."""
        self.undelivered = undelivered
        """The turn's list of steers it could not deliver (a failed write adds to it)."""
        self.collector: BatchCollector | None = None
        """The batch running now, if any."""
        self.stop: tuple[TurnEnd, str] | None = None
        """Set when a guardrail ends the turn: why, in words."""
        self._repeat_guard = RepeatGuard()
        self._unknown_streak = UnknownToolStreak()
        self._spawn_cap = SpawnCap(deps.config.spawn_cap)

    async def run(self, uses: tuple[ToolUseBlock, ...], malformed: dict[str, str]) -> None:
        """Run one reply's tool uses and persist their results (and pending steers)."""
        calls = [ToolCall.from_block(u, malformed.get(u.id)) for u in uses]
        registry = self.deps.keeper.tool_set  # the set this reply's request offered
        if self._unknown_streak.observe((c.name for c in calls), registry.names()):
            detail = f"{self._unknown_streak.limit} tool batches in a row named only unknown tools"
            self.stop = (TurnEnd.UNKNOWN_TOOLS, detail)
            collector = self.collector = BatchCollector(calls, on_result=self._on_result)
            collector.stop_reason = "the turn was ended: " + detail
        elif (
            capped := self._spawn_cap.observe(_count(registry, calls, "spawns_subagents"))
        ) is not None:
            self.stop = (TurnEnd.HALTED, f"Turn halted: {capped}.")
            collector = self.collector = BatchCollector(calls, on_result=self._on_result)
            collector.stop_reason = capped
        elif len(calls) == 1:
            # Its one result completes the batch and the final write follows at once:
            # no early flush to arrange (most batches; a flusher costs a task and a nursery).
            collector = self.collector = BatchCollector(calls, on_result=self._on_result)
            await self._run_calls(calls, collector)
        else:
            landed, landings = trio.open_memory_channel[None](len(calls))

            def on_result(index: int, result: ToolResult) -> None:
                self._on_result(index, result)
                landed.send_nowait(None)

            collector = self.collector = BatchCollector(calls, on_result=on_result)
            flush_errors: list[StoreError] = []
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._flush_results, collector, landings, flush_errors)
                async with landed:
                    await self._run_calls(calls, collector)
            if flush_errors:
                raise flush_errors[0]
        results = self._guarded(collector.results())
        await self.write_results(results, self.controls.take_steers())
        self.collector = None

    async def write_results(self, results: list[ToolResult], steers: list[str]) -> None:
        """Persist the batch's results (and steers) as the user message after the reply."""
        blocks = [r.to_block() for r in results]
        try:
            seq = await self._put_results([*blocks, *(steer_block(s) for s in steers)])
        except BaseException:
            self.undelivered.extend(steers)
            raise
        for text in steers:
            self.deps.hub.publish(ev.SteerDelivered(self.number, text, seq))

    # -- running ---------------------------------------------------------------------------

    def _tools_ctx(self, redirect: Bell) -> ToolContext:
        return attrs.evolve(
            self.deps.tools_ctx,
            interrupt=self.controls.interrupt,
            redirect=redirect,
            progress=self._on_progress,
            ask_approval=self.deps.approvals.callback(),
            services={
                **self.deps.tools_ctx.services,
                TurnUsage: TurnUsage(self.controls.context_used),
            },
        )

    def _on_progress(self, report: ToolProgress) -> None:
        if report.kind == "start":
            self.deps.hub.publish(
                ev.ToolStarted(self.number, report.call_id, report.tool, report.text)
            )
        elif report.kind == "output":
            self.deps.hub.publish(
                ev.ToolOutput(self.number, report.call_id, report.tool, report.text)
            )

    def _on_result(self, _: int, result: ToolResult) -> None:
        outcome = result.outcome
        self.deps.hub.publish(
            ev.ToolCompleted(
                self.number,
                result.call.id,
                result.call.name,
                result.status.value,
                outcome.is_error,
                len(outcome.content),
            )
        )

    async def _run_calls(self, calls: list[ToolCall], collector: BatchCollector) -> None:
        """Run one batch of calls in tool workers, results into ``collector``."""
        config, registry = self.deps.config, self.deps.keeper.tool_set
        policy = BatchPolicy(
            call_timeout=config.call_timeout,
            max_parallel=config.max_parallel_tools,
            budget=config.output_budget,
        )
        holds = _count(registry, calls, "holds_interrupt") > 0
        held = self.controls.hold_interrupt() if holds else nullcontext()
        with held, self.controls.running_tools() as redirect:
            await run_batch(
                calls,
                registry,
                self._tools_ctx(redirect),
                policy=policy,
                collector=collector,
                invoke=worker_invoker(self.spawner, registry),
            )

    async def _flush_results(
        self,
        collector: BatchCollector,
        landings: trio.MemoryReceiveChannel[None],
        errors: list[StoreError],
    ) -> None:
        """Persist results as they land, so a crash loses at most the calls in flight.

        A landed result waits up to ``FLUSH_DELAY`` for the rest of the batch, so
        a batch of quick calls is written once, by ``write_results`` (each store
        write costs about as much CPU as a tool call; see ``bench/session.py``).
        """
        async for _ in landings:
            with trio.move_on_after(FLUSH_DELAY):  # coalesce results landing close together
                while not collector.complete:
                    try:
                        await landings.receive()
                    except trio.EndOfChannel:
                        return  # the batch is over: the final write follows at once
            if collector.complete or errors:
                continue  # the final write follows at once
            try:
                await self._put_results([r.to_block() for r in collector.available()])
            except StoreError as error:
                errors.append(error)

    # -- guarding and writing --------------------------------------------------------------

    def _guarded(self, results: list[ToolResult]) -> list[ToolResult]:
        """Apply the repeat guard (``guards.py``): stub, warn, halt a scheduled turn."""
        out = []
        config = self.deps.config
        attended = self.deps.approvals.callback() is not None
        halts = loop_halts(config.loop_halt, scheduled=config.scheduled, attended=attended)
        for result in results:
            ran = result.status in (CallStatus.OK, CallStatus.ERROR)
            if ran and result.duplicate_of is None:
                args = result.call.args if isinstance(result.call.args, dict) else {}
                outcome = result.outcome
                check = self._repeat_guard.observe(
                    result.call.name,
                    args,
                    outcome.content,
                    call_id=result.call.id,
                    is_error=outcome.is_error,
                    halts=halts,
                )
                content = check.stub if check.stub is not None else outcome.content
                if check.verdict is not Verdict.OK:
                    content = f"{content}\n\n{check.message}"
                if content != outcome.content:
                    result = attrs.evolve(result, outcome=attrs.evolve(outcome, content=content))
                if check.verdict is Verdict.HALT and self.stop is None:
                    self.stop = (TurnEnd.HALTED, check.message)
            out.append(result)
        return out

    async def _put_results(self, blocks: list[ToolResultBlock | TextBlock]) -> int:
        """Write the batch's results message: appended first, then replaced as it grows.

        After a reply with tool uses, the only user message that can follow is
        this batch's results, so a trailing user message is replaced whole.
        """
        message = Message("user", tuple(blocks))
        if self.conv.ends_with("assistant"):
            return await self.conv.append(message)
        return await self.conv.replace_last(message)


def _count(registry: ToolRegistry, calls: list[ToolCall], flag: str) -> int:
    """How many of ``calls`` name a tool that declares ``flag`` (``holds_interrupt``...)."""
    return sum(1 for c in calls if getattr(registry.get(c.name), flag, False))
