"""Running a batch of tool calls: stages, deadlines, output budgets, cancellation.

``run_batch(calls, registry, ctx)`` plans the batch (``plan.py``), runs each
stage's calls concurrently (at most ``max_parallel`` at a time) and returns
one ``ToolResult`` per call in call order, whatever order they finished in.

- Each call has a deadline: ``Tool.call_timeout(args)`` or the policy's
  ``call_timeout`` (420 s, Hermes'). At the deadline the call is cancelled (a terminal
  command's process group is killed) and gets a synthetic "timed out after N s"
  error result. Time spent waiting for a person to approve does not count.
- Identical calls run once; each gets the same result.
- After the batch, results over ``budget.per_result`` characters are saved to
  ``ctx.spill_dir`` and replaced by a preview and the path; then, while the
  batch's total is over ``budget.per_batch``, the largest results get the same
  treatment.
- A soft interrupt (``ctx.interrupt`` set) starts nothing new: unstarted calls
  are skipped, running ones finish (a terminal command stops with exit 130), and
  ``run_batch`` returns normally.
- Cancellation of the caller's scope cancels running calls and propagates:
  ``run_batch`` never swallows ``trio.Cancelled``. Pass a ``BatchCollector``
  and read ``collector.results()`` in a ``finally``: it still holds exactly one
  result per call (finished ones theirs, running ones *cancelled*, unstarted
  ones *skipped*). See ``results.py`` for the pattern.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import attrs
import trio

from .base import ToolCall, ToolOutcome
from .brief import brief_arguments, given_arguments
from .budget import OutputBudget, spill, worth_spilling
from .context import ToolContext
from .plan import BatchPlan, plan_batch
from .registry import PreparedCall, ToolRegistry
from .results import BatchCollector, CallStatus, ToolResult

Invoker = Callable[[PreparedCall, ToolContext], Awaitable[ToolOutcome]]
"""Runs one prepared call (``ToolRegistry.invoke`` by default; the session uses tool workers)."""


@attrs.frozen(slots=True)
class BatchPolicy:
    call_timeout: float = 420.0
    """Default per-call deadline in seconds (a tool may set its own)."""
    max_parallel: int = 8
    """At most this many calls of a stage run at once."""
    budget: OutputBudget = attrs.field(factory=OutputBudget)
    cleanup_timeout: float = 10.0
    """Bound on the shielded end-of-batch work (spilling large results)."""


async def run_batch(
    calls: Sequence[ToolCall],
    registry: ToolRegistry,
    ctx: ToolContext,
    *,
    policy: BatchPolicy | None = None,
    collector: BatchCollector | None = None,
    invoke: Invoker | None = None,
) -> list[ToolResult]:
    """Run ``calls``; one result per call, in call order. Re-raises cancellation.

    ``invoke`` runs each prepared call (default ``registry.invoke``): the
    session passes one that runs the call in its own tool-worker actor.
    """
    policy = policy or BatchPolicy()
    if collector is None:
        collector = BatchCollector(calls)
    elif collector.calls != tuple(calls):
        raise ValueError("the collector was made for a different list of calls")
    plan = plan_batch(collector.calls, registry, ctx.cwd)
    for index, outcome in plan.rejected.items():
        collector.set(index, ToolResult(collector.calls[index], outcome, CallStatus.INVALID))
    for duplicate, primary in plan.duplicates.items():
        collector.alias(duplicate, primary)
    limiter = trio.CapacityLimiter(max(1, policy.max_parallel))
    try:
        await _run_stages(plan, invoke or registry.invoke, ctx, policy, collector, limiter)
    finally:
        with trio.move_on_after(policy.cleanup_timeout, shield=True):
            await _apply_budget(collector, ctx.spill_dir, policy.budget)
    return collector.results()


async def _run_stages(
    plan: BatchPlan,
    invoke: Invoker,
    ctx: ToolContext,
    policy: BatchPolicy,
    collector: BatchCollector,
    limiter: trio.CapacityLimiter,
) -> None:
    for stage in plan.stages:
        if ctx.interrupted:
            collector.stop_reason = "the turn was interrupted"
            return
        if len(stage) == 1:
            index = stage[0]
            await _run_call(index, plan.prepared[index], invoke, ctx, policy, collector, limiter)
            continue
        async with trio.open_nursery() as nursery:
            for index in stage:
                prepared = plan.prepared[index]
                nursery.start_soon(
                    _run_call, index, prepared, invoke, ctx, policy, collector, limiter
                )
    if ctx.interrupted and not collector.complete:
        collector.stop_reason = "the turn was interrupted"


def call_deadline(prepared: PreparedCall, default: float) -> float:
    """The deadline of one call: the tool's own, else ``default``."""
    try:
        own = prepared.tool.call_timeout(prepared.args)
    except Exception:  # a buggy hook falls back to the default deadline
        own = None
    return default if own is None else own


def _pauser(scope: trio.CancelScope) -> Callable[[], AbstractContextManager[None]]:
    """A context manager that stops ``scope``'s deadline while it is entered."""

    @contextmanager
    def pause() -> Iterator[None]:
        saved = scope.deadline
        started = trio.current_time()
        scope.deadline = math.inf
        try:
            yield
        finally:
            scope.deadline = saved + (trio.current_time() - started)

    return pause


async def _run_call(
    index: int,
    prepared: PreparedCall,
    invoke: Invoker,
    ctx: ToolContext,
    policy: BatchPolicy,
    collector: BatchCollector,
    limiter: trio.CapacityLimiter,
) -> None:
    call = prepared.call
    async with limiter:
        if ctx.interrupted:
            return
        timeout = call_deadline(prepared, policy.call_timeout)
        collector.mark_started(index)
        with trio.CancelScope(deadline=trio.current_time() + timeout) as scope:
            call_ctx = ctx.for_call(call.id, call.name, _pauser(scope))
            call_ctx.report("start", brief_arguments(given_arguments(prepared)))
            outcome = await invoke(prepared, call_ctx)
        if scope.cancelled_caught:
            outcome = ToolOutcome.error(
                f"[Tool call timed out after {timeout:g} s: {call.name} was stopped and any "
                "process it started was killed. Its work may be incomplete.]",
                reason="timeout",
            )
            status = CallStatus.TIMEOUT
        else:
            status = CallStatus.ERROR if outcome.is_error else CallStatus.OK
        collector.set(index, ToolResult(call, outcome, status))
        call_ctx.report("end", status.value)


async def _apply_budget(collector: BatchCollector, directory: Path, budget: OutputBudget) -> None:
    """Spill results over the per-result limit, then the largest while over the batch limit."""
    finished = collector.finished()
    for index, result in finished.items():
        if len(result.outcome.content) > budget.per_result:
            await _spill_one(collector, index, result, directory, budget)
    finished = collector.finished()
    total = sum(len(r.outcome.content) for r in finished.values())
    for index, result in sorted(finished.items(), key=lambda kv: -len(kv[1].outcome.content)):
        if total <= budget.per_batch:
            break
        if result.spilled_to is not None or not worth_spilling(result.outcome.content, budget):
            continue
        before = len(result.outcome.content)
        await _spill_one(collector, index, result, directory, budget)
        total -= before - len(collector.finished()[index].outcome.content)


async def _spill_one(
    collector: BatchCollector, index: int, result: ToolResult, directory: Path, budget: OutputBudget
) -> None:
    call = result.call
    text, path = await trio.to_thread.run_sync(
        spill, result.outcome.content, directory, call.id, call.name, budget
    )
    collector.replace_outcome(index, attrs.evolve(result.outcome, content=text), path)
