"""``python -m bench mcp``: what the MCP actor path costs over a bare SDK client session.

Figures (the server is ``bench/mcp_server.py``, the SDK's ``MCPServer`` over stdio):

- ``mcp_call_ratio``: one ``echo`` call the way a session makes it (``run_batch``
  of one call on the registry an ``McpSupervisor`` filled: planning, the
  ``McpTool`` on the actor's connection, the result converted) against the
  same call on a bare ``ClientSession`` over the SDK's own ``stdio_client`` to
  a second process of the same server. The two alternate call by call in one
  run; each figure is the median per-call time of ``--reps`` repetitions.
  Target <= 1.3.
- ``mcp_cancel_p99_ms``: a ``hang`` call cancelled through the batch (as a
  turn cancel does), from ``cancel()`` to the moment the server has received
  ``notifications/cancelled`` (it writes a marker file, polled every 0.5 ms).
  Also reported: ``cancel()`` to the cancelled result being recorded. Target
  <= 50.
- ``mcp_restart_ms``: a stdio server that crashes (its ``crash`` tool exits the
  process) back up with its tools listed, *excluding the backoff delay* (the
  benchmark's backoff is 0 s; the daemon's starts at 1 s): from the crashed
  call's result to ``ServerLink`` ready again. Baseline: spawning the same
  server with the bare SDK, ``initialize`` and ``list_tools``, in the same
  run (``mcp_restart_ratio``).

A broken invariant (a wrong answer, a cancel the server never saw, a restart
that did not list the tools) is listed under ``problems`` and exits 1.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs
import trio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from actors import open_system
from hermes.mcp import parse_mcp
from hermes.mcp.link import ServerLink
from hermes.mcp.server import McpOptions
from hermes.mcp.supervisor import McpSupervisor
from hermes.tools import BatchCollector, ToolCall, ToolContext, ToolRegistry, run_batch
from supervisors import Backoff

from .stats import figures_table, report, targets_met

SERVER = str(Path(__file__).with_name("mcp_server.py"))
ARGS = ["-P", SERVER]
"""``-P``: the script's directory (``bench/``, where this ``mcp.py`` lives) is not put on
``sys.path``, so the server imports the SDK's ``mcp``, not this module."""
TARGETS: dict[str, tuple[str, float]] = {
    "mcp_call_ratio": ("<=", 1.3),
    "mcp_cancel_p99_ms": ("<=", 50.0),
}


@attrs.frozen(slots=True)
class Sizes:
    calls: int = 300
    """Calls of each kind per repetition."""
    cancels: int = 40
    restarts: int = 5

    @classmethod
    def quick(cls) -> Sizes:
        return cls(calls=20, cancels=4, restarts=2)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50": statistics.median(ordered),
        "p99": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))],
        "max": ordered[-1],
    }


class Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def check(self, ok: bool, problem: str) -> None:
        if not ok:
            self.items.append(problem)


async def _ready(link: ServerLink, timeout: float = 60) -> None:
    with trio.fail_after(timeout):
        while link.state != "ready":
            await link.changed.wait()


async def _wait_for(path: Path, timeout: float = 10) -> float:
    with trio.fail_after(timeout):
        while not await trio.Path(path).exists():  # noqa: ASYNC110 - the server's file
            await trio.sleep(0.0005)
    return time.perf_counter()


async def measure_async(sizes: Sizes, reps: int) -> dict[str, Any]:
    problems = Problems()
    work = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    raw_config, errors = parse_mcp(
        {"servers": {"b": {"command": sys.executable, "args": ARGS}}, "osv_check": False},
        "bench",
    )
    assert not errors, errors
    options = McpOptions(backoff=Backoff(min=0.0, max=0.0, random_factor=0.0))
    results: dict[str, Any] = {}
    async with open_system("bench-mcp") as system:
        registry = ToolRegistry()
        sup = McpSupervisor(raw_config, registry, environ={}, options=options)
        await system.spawn(sup, name="mcp")
        link = sup.links["b"]
        await _ready(link)
        ctx = ToolContext.create(work, work / "spill")
        params = StdioServerParameters(command=sys.executable, args=ARGS)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as bare:
            await bare.initialize()
            await bare.list_tools()
            ours_ms, bare_ms = await _calls(registry, ctx, bare, sizes, reps, problems)
        results["call_ms"] = ours_ms
        results["bare_call_ms"] = bare_ms
        results["mcp_call_ratio"] = ours_ms / bare_ms
        cancel = await _cancels(registry, ctx, work, sizes, problems)
        results["cancel_ms"] = cancel
        results["mcp_cancel_p99_ms"] = cancel["told"]["p99"]
        restart, spawn = await _restarts(registry, ctx, link, params, sizes, problems)
        results["restart_ms"] = restart
        results["bare_start_ms"] = spawn
        results["mcp_restart_ms"] = restart["p50"]
        results["mcp_restart_ratio"] = restart["p50"] / spawn["p50"]
    results["sizes"] = attrs.asdict(sizes)
    results["problems"] = problems.items
    results["targets_met"] = targets_met(results, TARGETS)
    return results


async def _calls(
    registry: ToolRegistry,
    ctx: ToolContext,
    bare: ClientSession,
    sizes: Sizes,
    reps: int,
    problems: Problems,
) -> tuple[float, float]:
    ours: list[float] = []
    theirs: list[float] = []
    for rep in range(reps + 1):  # the first repetition warms up
        ours_total = bare_total = 0.0
        for i in range(sizes.calls):
            text = f"call {i}"
            start = time.perf_counter()
            [result] = await run_batch(
                [ToolCall(f"t{i}", "mcp_b_echo", {"text": text})], registry, ctx
            )
            middle = time.perf_counter()
            answer = await bare.call_tool("echo", {"text": text})
            end = time.perf_counter()
            ours_total += middle - start
            bare_total += end - middle
            if i == 0:
                problems.check(result.outcome.content == text, f"ours answered {result.outcome!r}")
                problems.check(not answer.is_error, f"bare answered {answer!r}")
        if rep:
            ours.append(ours_total / sizes.calls * 1000)
            theirs.append(bare_total / sizes.calls * 1000)
    return statistics.median(ours), statistics.median(theirs)


async def _cancels(
    registry: ToolRegistry, ctx: ToolContext, work: Path, sizes: Sizes, problems: Problems
) -> dict[str, Any]:
    told: list[float] = []
    recorded: list[float] = []
    for i in range(sizes.cancels):
        marker = work / f"hang-{i}"
        call = ToolCall(f"h{i}", "mcp_b_hang", {"marker": str(marker)})
        collector = BatchCollector([call])
        scope = trio.CancelScope()
        ended: list[float] = []

        async def run(
            scope: trio.CancelScope = scope,
            ended: list[float] = ended,
            call: ToolCall = call,
            collector: BatchCollector = collector,
        ) -> None:
            with scope:
                await run_batch([call], registry, ctx, collector=collector)
            ended.append(time.perf_counter())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            await _wait_for(Path(str(marker) + ".started"))  # the server is in the call
            asked = time.perf_counter()
            scope.cancel()
        seen = await _wait_for(Path(str(marker) + ".cancelled"))
        [result] = collector.results()
        problems.check(result.status.value == "cancelled", f"hang ended {result.status}")
        recorded.append((ended[0] - asked) * 1000)
        told.append((seen - asked) * 1000)
    return {"told": percentiles(told), "recorded": percentiles(recorded)}


async def _restarts(
    registry: ToolRegistry,
    ctx: ToolContext,
    link: ServerLink,
    params: StdioServerParameters,
    sizes: Sizes,
    problems: Problems,
) -> tuple[dict[str, float], dict[str, float]]:
    ours: list[float] = []
    bare: list[float] = []
    for _ in range(sizes.restarts):
        connects = link.connects
        [crashed] = await run_batch([ToolCall("c", "mcp_b_crash", {})], registry, ctx)
        start = time.perf_counter()
        with trio.fail_after(60):
            while link.connects == connects or link.state != "ready":
                await link.changed.wait()
        ours.append((time.perf_counter() - start) * 1000)
        problems.check(crashed.outcome.is_error, "the crash call did not fail")
        problems.check("echo" in link.tools, f"restarted without its tools: {link.tools}")
        start = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            bare.append((time.perf_counter() - start) * 1000)
        problems.check(len(listed.tools) == 3, "the bare session listed the wrong tools")
    return percentiles(ours), percentiles(bare)


def measure(sizes: Sizes, reps: int) -> dict[str, Any]:
    return trio.run(measure_async, sizes, reps)


def render(results: dict[str, Any]) -> str:
    met = results["targets_met"]
    cancel = results["cancel_ms"]
    restart, spawn = results["restart_ms"], results["bare_start_ms"]
    rows = [
        (
            "mcp_call_ratio",
            f"{results['mcp_call_ratio']:.2f}",
            f"run_batch on the actor's connection {results['call_ms']:.3f} ms vs bare "
            f"ClientSession.call_tool {results['bare_call_ms']:.3f} ms per call",
            "<= 1.3",
            "yes" if met["mcp_call_ratio"] else "NO",
        ),
        (
            "mcp_cancel_p99_ms",
            f"{results['mcp_cancel_p99_ms']:.2f}",
            f"to the server told: p50 {cancel['told']['p50']:.2f}; to the cancelled result "
            f"recorded: p50 {cancel['recorded']['p50']:.2f}, p99 {cancel['recorded']['p99']:.2f}",
            "<= 50",
            "yes" if met["mcp_cancel_p99_ms"] else "NO",
        ),
        (
            "mcp_restart_ms",
            f"{results['mcp_restart_ms']:.1f}",
            f"crash to listed again, no backoff (p50; max {restart['max']:.1f}); bare SDK "
            f"spawn+initialize+list {spawn['p50']:.1f} ms (x{results['mcp_restart_ratio']:.2f})",
            "-",
            "-",
        ),
    ]
    return figures_table(rows, results["problems"])


def main(json_output: bool, quick: bool, reps: int) -> int:
    return report(measure(Sizes.quick() if quick else Sizes(), reps), render, json_output)
