"""Running batches: concurrency, order, dedupe, deadlines, spilling, interrupt, cancellation."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from hermes.bell import Bell
from hermes.model.types import ToolResultBlock
from hermes.tools import (
    NO_TIMEOUT,
    ApprovalChoice,
    ApprovalRequest,
    BatchCollector,
    BatchPolicy,
    CallStatus,
    ToolCall,
    ToolContext,
    ToolKind,
    ToolProgress,
    ToolRegistry,
    builtin_tools,
    run_batch,
)
from hermes.tools.budget import OutputBudget

from .helpers import Crasher, Gate, Probe, Sleeper


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def tools(probe: Probe) -> ToolRegistry:
    return ToolRegistry(
        [
            *builtin_tools(),
            Sleeper("read", ToolKind.READ_ONLY, probe),
            Sleeper("write", ToolKind.WRITE, probe),
            Sleeper("other", ToolKind.OTHER, probe),
            Crasher(),
            Gate(),
        ]
    )


def call(i: int | str, name: str, **args: Any) -> ToolCall:
    return ToolCall(f"c{i}", name, args)


async def test_read_only_calls_run_in_parallel(
    tools: ToolRegistry, ctx: ToolContext, probe: Probe
) -> None:
    calls = [call(i, "read", tag=f"r{i}", delay=0.3) for i in range(4)]
    with trio.fail_after(5):
        start = time.monotonic()
        results = await run_batch(calls, tools, ctx)
        elapsed = time.monotonic() - start
    assert probe.max_active == 4
    assert elapsed < 0.9  # sequentially it would take 1.2 s
    assert [r.status for r in results] == [CallStatus.OK] * 4


async def test_other_calls_run_one_at_a_time_in_order(
    tools: ToolRegistry, ctx: ToolContext, probe: Probe
) -> None:
    calls = [call(i, "other", tag=f"o{i}", delay=0.02) for i in range(4)]
    with trio.fail_after(5):
        await run_batch(calls, tools, ctx)
    assert probe.max_active == 1
    assert probe.started == ["o0", "o1", "o2", "o3"]


async def test_results_come_back_in_call_order(
    tools: ToolRegistry, ctx: ToolContext, probe: Probe
) -> None:
    delays = [0.3, 0.2, 0.1, 0.0]
    calls = [call(i, "read", tag=f"r{i}", delay=d) for i, d in enumerate(delays)]
    with trio.fail_after(5):
        results = await run_batch(calls, tools, ctx)
    assert probe.finished == ["r3", "r2", "r1", "r0"]
    assert [r.call.id for r in results] == ["c0", "c1", "c2", "c3"]
    assert [r.outcome.content for r in results] == ["r0", "r1", "r2", "r3"]
    blocks = [r.to_block() for r in results]
    assert blocks[0] == ToolResultBlock("c0", "r0", False)


async def test_parallelism_is_bounded(tools: ToolRegistry, ctx: ToolContext, probe: Probe) -> None:
    calls = [call(i, "read", tag=f"r{i}", delay=0.05) for i in range(6)]
    with trio.fail_after(5):
        await run_batch(calls, tools, ctx, policy=BatchPolicy(max_parallel=2))
    assert probe.max_active == 2


async def test_non_overlapping_writes_overlap_in_time(
    tools: ToolRegistry, ctx: ToolContext, probe: Probe
) -> None:
    calls = [
        call(0, "write", tag="a", path="a.txt", delay=0.2),
        call(1, "write", tag="b", path="b.txt", delay=0.2),
        call(2, "write", tag="a2", path="a.txt", delay=0.0),
    ]
    with trio.fail_after(5):
        await run_batch(calls, tools, ctx)
    assert probe.max_active == 2
    assert probe.finished.index("a") < probe.started.index("a2")


async def test_identical_calls_run_once(
    tools: ToolRegistry, ctx: ToolContext, probe: Probe
) -> None:
    calls = [
        call(0, "read", tag="same", delay=0.01),
        call(1, "read", tag="other"),
        call(2, "read", tag="same", delay=0.01),
        call(3, "read", delay="0.01", tag="same"),
    ]
    with trio.fail_after(5):
        results = await run_batch(calls, tools, ctx)
    assert sorted(probe.started) == ["other", "same"]
    assert [r.call.id for r in results] == ["c0", "c1", "c2", "c3"]
    assert [r.outcome.content for r in results] == ["same", "other", "same", "same"]
    assert [r.duplicate_of for r in results] == [None, None, "c0", "c0"]


async def test_invalid_and_crashing_calls(tools: ToolRegistry, ctx: ToolContext) -> None:
    calls = [
        call(0, "read", tag="ok"),
        call(1, "no_such_tool"),
        ToolCall("c2", "read", "not an object"),
        call(3, "crash"),
        call(4, "read"),
    ]
    with trio.fail_after(5):
        results = await run_batch(calls, tools, ctx)
    assert [r.status for r in results] == [
        CallStatus.OK,
        CallStatus.INVALID,
        CallStatus.INVALID,
        CallStatus.ERROR,
        CallStatus.INVALID,
    ]
    assert "Available tools:" in results[1].outcome.content
    assert "missing required field 'tag'" in results[4].outcome.content
    assert all(r.to_block().is_error for r in results[1:])


async def test_a_call_past_its_deadline_gets_a_timeout_result(
    tools: ToolRegistry, ctx: ToolContext, probe: Probe
) -> None:
    calls = [call(0, "read", tag="slow", delay=30), call(1, "read", tag="fast", delay=0.01)]
    with trio.fail_after(5):
        start = time.monotonic()
        results = await run_batch(calls, tools, ctx, policy=BatchPolicy(call_timeout=0.2))
        elapsed = time.monotonic() - start
    assert elapsed < 2
    assert results[0].status is CallStatus.TIMEOUT
    assert results[0].outcome.is_error
    assert "timed out after 0.2 s" in results[0].outcome.content
    assert probe.cancelled == ["slow"]
    assert results[1].status is CallStatus.OK


class OwnDeadline(Sleeper):
    def __init__(self, name: str, deadline: float, probe: Probe) -> None:
        super().__init__(name, ToolKind.READ_ONLY, probe)
        self.deadline = deadline

    def call_timeout(self, args: Mapping[str, Any]) -> float | None:
        return self.deadline


async def test_a_tool_may_set_its_own_deadline(ctx: ToolContext, probe: Probe) -> None:
    tools = ToolRegistry(
        [OwnDeadline("quick", 0.1, probe), OwnDeadline("exempt", NO_TIMEOUT, probe)]
    )
    calls = [call(0, "quick", tag="q", delay=5), call(1, "exempt", tag="e", delay=0.4)]
    with trio.fail_after(5):
        results = await run_batch(calls, tools, ctx, policy=BatchPolicy(call_timeout=0.2))
    assert results[0].status is CallStatus.TIMEOUT and "after 0.1 s" in results[0].outcome.content
    assert results[1].status is CallStatus.OK
    assert math.isinf(NO_TIMEOUT)


async def test_waiting_for_approval_does_not_count_against_the_deadline(
    tools: ToolRegistry, ctx: ToolContext
) -> None:
    async def slow_person(request: ApprovalRequest) -> ApprovalChoice:
        await trio.sleep(0.5)
        return ApprovalChoice.ONCE

    approving = attrs.evolve(ctx, ask_approval=slow_person)
    with trio.fail_after(5):
        results = await run_batch(
            [call(0, "gate", command="rm -rf build")],
            tools,
            approving,
            policy=BatchPolicy(call_timeout=0.2),
        )
    assert results[0].status is CallStatus.OK
    assert results[0].outcome.content == "approved_once"


async def test_a_large_result_is_spilled_with_a_preview(
    tools: ToolRegistry, ctx: ToolContext
) -> None:
    with trio.fail_after(5):
        results = await run_batch([call(0, "read", tag="xy", size=150_000)], tools, ctx)
    result = results[0]
    assert result.status is CallStatus.OK
    assert result.spilled_to is not None and result.spilled_to.parent == ctx.spill_dir
    assert result.spilled_to.read_text() == "x" * 150_000
    content = result.outcome.content
    assert len(content) < 5_000
    assert str(result.spilled_to) in content and "150,000 characters" in content
    assert "x" * 1_000 in content  # the preview


async def test_a_large_batch_spills_its_largest_results_first(
    tools: ToolRegistry, ctx: ToolContext
) -> None:
    calls = [
        call(0, "read", tag="a", size=80_000),
        call(1, "read", tag="b", size=90_000),
        call(2, "read", tag="c", size=50_000),
        call(3, "read", tag="d", size=10),
    ]
    with trio.fail_after(5):
        results = await run_batch(calls, tools, ctx)
    assert [r.spilled_to is not None for r in results] == [False, True, False, False]
    assert results[0].outcome.content == "a" * 80_000
    assert sum(len(r.outcome.content) for r in results) <= 200_000
    spilled = results[1].spilled_to
    assert spilled is not None and spilled.read_text() == "b" * 90_000


async def test_custom_budget(tools: ToolRegistry, ctx: ToolContext) -> None:
    policy = BatchPolicy(budget=OutputBudget(per_result=10_000, per_batch=15_000))
    calls = [call(i, "read", tag=f"{i}", size=9_000) for i in range(3)] + [
        call(9, "read", tag="tiny", size=1_000)
    ]
    with trio.fail_after(5):
        results = await run_batch(calls, tools, ctx, policy=policy)
    assert [r.spilled_to is not None for r in results] == [True, True, False, False]
    assert sum(len(r.outcome.content) for r in results) <= 15_000


async def test_cancelled_batch_gives_one_result_per_call_and_reraises(
    tools: ToolRegistry, ctx: ToolContext, probe: Probe
) -> None:
    calls = [
        call(0, "read", tag="done", delay=0.0),
        call(1, "read", tag="slow-a", delay=30),
        call(2, "read", tag="slow-b", delay=30),
        call(3, "read", tag="slow-a", delay=30),  # a duplicate of a running call
        call(4, "other", tag="later"),
        call(5, "nope"),
    ]
    collector = BatchCollector(calls)
    returned = False
    with trio.fail_after(5):
        with trio.move_on_after(0.3) as scope:
            try:
                await run_batch(calls, tools, ctx, collector=collector)
                returned = True
            finally:
                results = collector.results()
    assert scope.cancelled_caught and not returned
    assert [r.call.id for r in results] == [c.id for c in calls]
    assert [r.status for r in results] == [
        CallStatus.OK,
        CallStatus.CANCELLED,
        CallStatus.CANCELLED,
        CallStatus.CANCELLED,
        CallStatus.SKIPPED,
        CallStatus.INVALID,
    ]
    assert sorted(probe.cancelled) == ["slow-a", "slow-b"]
    assert "later" not in probe.started
    assert "was stopped while running" in results[1].outcome.content
    assert "did not run" in results[4].outcome.content
    assert "Nothing was executed" in results[4].outcome.content
    assert all(r.to_block().tool_use_id == c.id for r, c in zip(results, calls, strict=True))


async def test_cancellation_is_not_swallowed(tools: ToolRegistry, ctx: ToolContext) -> None:
    reached = False
    with trio.CancelScope() as scope:
        scope.cancel()
        await run_batch([call(0, "read", tag="x", delay=1)], tools, ctx)
        reached = True
    assert scope.cancelled_caught and not reached


async def test_soft_interrupt_skips_what_has_not_started(
    tools: ToolRegistry, ctx: ToolContext, probe: Probe
) -> None:
    interrupt = Bell()
    interruptible = attrs.evolve(ctx, interrupt=interrupt)
    calls = [
        call(0, "other", tag="first", delay=0.2),
        call(1, "other", tag="second"),
        call(2, "read", tag="third"),
    ]

    async def interrupt_soon() -> None:
        await trio.sleep(0.05)
        interrupt.set()

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(interrupt_soon)
            results = await run_batch(calls, tools, interruptible)
    assert [r.status for r in results] == [CallStatus.OK, CallStatus.SKIPPED, CallStatus.SKIPPED]
    assert "interrupted" in results[1].outcome.content
    assert probe.started == ["first"]


async def test_progress_reports(tools: ToolRegistry, ctx: ToolContext) -> None:
    seen: list[ToolProgress] = []
    reporting = attrs.evolve(ctx, progress=seen.append)
    with trio.fail_after(5):
        await run_batch([call(0, "read", tag="x"), call(1, "crash")], tools, reporting)
    assert [(p.call_id, p.kind, p.text) for p in seen] == [
        ("c0", "start", "x"),  # the arguments in short (tools.brief)
        ("c0", "end", "ok"),
        ("c1", "start", ""),
        ("c1", "end", "error"),
    ]


async def test_collector_must_match_the_calls(tools: ToolRegistry, ctx: ToolContext) -> None:
    with pytest.raises(ValueError, match="different list"):
        await run_batch([call(0, "read", tag="x")], tools, ctx, collector=BatchCollector([]))


async def test_real_tools_in_one_batch(
    tools: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    calls = [
        call(0, "write_file", path="notes/a.txt", content="alpha\nbeta\n"),
        call(1, "read_file", path="notes/a.txt"),
        call(2, "patch", path="notes/a.txt", old_string="beta", new_string="gamma"),
        call(3, "search_files", pattern="gam+a"),
        call(4, "terminal", command="cat notes/a.txt"),
    ]
    with trio.fail_after(10):
        results = await run_batch(calls, tools, ctx)
    assert [r.status for r in results] == [CallStatus.OK] * 5
    assert "     2|beta" in results[1].outcome.content
    assert "notes/a.txt:2: gamma" in results[3].outcome.content
    assert results[4].outcome.content == "alpha\ngamma\n[exit code: 0]"
