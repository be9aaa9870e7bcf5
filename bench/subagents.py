"""``python -m bench subagents``: fan-out throughput, fan-out cancel latency, idle child memory.

The model is the fake provider in a child process (``bench/subagents_fake.py``,
fixed rules keyed on markers), so its CPU is not charged to us. The store is a
real SQLite file; its worker thread is part of this process. Figures:

- ``fanout_children``: 10 parent sessions at once, each delegating one batch
  of 100 tasks (``max_concurrent_children`` 100, daemon cap 1,000): 1,000
  child sessions created, run (one model call each) and closed, all
  completing. Reported: wall time, CPU (``time.process_time``) per child
  turn, and that CPU as a ratio to the bare cost of the same child model calls
  made directly with ``ModelClient.complete`` (recorded, replayed 100 at a
  time) in the same run. Median of ``--reps``.
- ``fanout_cancel_ratio_p50`` (the target, <= 2.0): a parent with 100
  running children, each with a background ``sleep 300`` and an endless model
  stream, hard-cancelled (``session.cancel()``) until it returns: every child
  subtree is gone and every ``sleep`` reaped (checked in ``/proc`` right
  after); its p50 over the p50 of the same cancel done the plainest way in
  trio (``direct_cancel_once``: 100 tasks, each with the same ``sleep 300``
  and the same endless stream, one scope cancelled; no actors, nothing
  persisted), one direct cancel after each of ours so both see the same
  machine.
- ``fanout_cancel_p99_ms``: that cancel's absolute p99, reported beside the
  ratio and not judged: on this 2-core VM a fixed pure-Python loop varies by
  max/p50 ~1.5 over 100 runs, so the p99 of 10 cancels follows the machine
  more than the code; the ratio does not. The p99 ratio and the direct
  figures are in ``fanout_cancel_ms``.
- ``idle_child_kb``: memory per idle child session (a child's store row,
  ``SessionActor`` with its process registry and narrowed tools), measured
  over 200 of them: Python heap growth (``tracemalloc``), with the RSS growth
  alongside in ``details``.

A broken invariant (a child that did not complete, a ``sleep`` left running, a
child alive after the cancel) is listed under ``problems`` and makes the
command exit 1.
"""

from __future__ import annotations

import gc
import signal
import statistics
import subprocess
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import trio

from actors import ActorSystem, open_system
from hermes.model import ModelRequest, RetryPolicy
from hermes.model.types import ToolResultBlock
from hermes.procgroup import signal_group
from hermes.session import (
    EventHub,
    SessionActor,
    SessionConfig,
    SessionDeps,
    SessionHandle,
    TurnEnd,
    start_session,
)
from hermes.store import StoreClient, spawn_store
from hermes.subagents import SubagentConfig, SubagentRuntime, TaskSpec, with_delegation
from hermes.subagents.child import child_config, child_deps, child_registry
from hermes.tools import default_registry

from . import subagents_fake as script
from .child import serving
from .session import RecordingClient, children, percentiles
from .stats import figures_table, report, rss_bytes, targets_met

API_KEY = "bench-key"
MODEL = "claude-bench"
TARGETS: dict[str, tuple[str, float]] = {"fanout_cancel_ratio_p50": ("<=", 2.0)}


@attrs.frozen
class Sizes:
    sessions: int = 10
    children: int = 100
    cancel_children: int = 100
    cancels: int = 10
    idle: int = 200

    @classmethod
    def quick(cls) -> Sizes:
        return cls(sessions=2, children=5, cancel_children=4, cancels=2, idle=10)


@contextmanager
def scripted_fake() -> Iterator[str]:
    """Start ``bench.subagents_fake`` in a child process; yield its base URL."""
    with serving(["bench.subagents_fake", "--api-key", API_KEY]) as (url, _):
        yield url


@attrs.define
class Bench:
    system: ActorSystem
    store: StoreClient
    client: RecordingClient
    config: SessionConfig
    runtime: SubagentRuntime
    problems: list[str] = attrs.field(factory=list)
    opened: int = 0

    def deps(self) -> SessionDeps:
        return SessionDeps(
            store=self.store,
            client=self.client,
            registry=with_delegation(default_registry()),
            subagents=self.runtime.host(),
        )

    async def open_parent(self) -> SessionHandle:
        self.opened += 1
        return await start_session(self.system, self.config, self.deps(), name=f"p-{self.opened}")

    def check(self, ok: bool, problem: str) -> None:
        if not ok and len(self.problems) < 20:
            self.problems.append(problem)


# -- fan-out throughput -------------------------------------------------------------------


async def fanout_once(bench: Bench, sizes: Sizes) -> tuple[float, float, list[ModelRequest]]:
    """Wall and CPU seconds of one fan-out; the child requests it made."""
    recorded: list[ModelRequest] = []
    parents = [await bench.open_parent() for _ in range(sizes.sessions)]
    results: list[Any] = []

    async def run(parent: SessionHandle) -> None:
        results.append(await parent.run(f"{script.FANOUT} {sizes.children}", timeout=600))

    gc.collect()
    bench.client.recording = recorded
    wall, cpu = time.perf_counter(), time.process_time()
    async with trio.open_nursery() as nursery:
        for parent in parents:
            nursery.start_soon(run, parent)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    bench.client.recording = None
    for parent, result in zip(parents, results, strict=True):
        bench.check(result.reason is TurnEnd.COMPLETED, f"parent turn ended {result.reason}")
        listed = await parent.list_subagents()
        states = [i.state for i in listed]
        failed = [i.detail for i in listed if i.state != "completed"]
        bench.check(
            states.count("completed") == min(sizes.children, 50),  # 50 finished kept listed
            f"children ended {sorted(set(states))} ({len(states)} listed): {failed[:2]}",
        )
        await parent.close()
    child_requests = [r for r in recorded if any(script.CHILD_MARK in b.text for b in r.system)]
    bench.check(
        len(child_requests) == sizes.sessions * sizes.children,
        f"{len(child_requests)} child model calls for {sizes.sessions * sizes.children} children",
    )
    return wall, cpu, child_requests


async def direct_calls(bench: Bench, requests: list[ModelRequest], concurrency: int) -> float:
    """CPU seconds of the same child model calls made directly."""
    limiter = trio.CapacityLimiter(concurrency)

    async def call(request: ModelRequest) -> None:
        async with limiter:
            await bench.client.complete(request)

    gc.collect()
    cpu = time.process_time()
    async with trio.open_nursery() as nursery:
        for request in requests:
            nursery.start_soon(call, request)
    return time.process_time() - cpu


async def fanout(bench: Bench, sizes: Sizes, reps: int) -> dict[str, Any]:
    await fanout_once(bench, Sizes(sessions=1, children=min(10, sizes.children)))  # warm-up
    walls, per_child, direct, ratios = [], [], [], []
    total = sizes.sessions * sizes.children
    for _ in range(reps):
        wall, cpu, requests = await fanout_once(bench, sizes)
        base = await direct_calls(bench, requests, sizes.children)
        walls.append(wall)
        per_child.append(cpu / total * 1e6)
        direct.append(base / max(1, len(requests)) * 1e6)
        ratios.append(cpu / base if base else 0.0)
    return {
        "children": total,
        "completed": bench.runtime.gate.admitted_total,
        "wall_s": statistics.median(walls),
        "wall_s_reps": walls,
        "cpu_us_per_child_turn": statistics.median(per_child),
        "direct_cpu_us_per_call": statistics.median(direct),
        "ratio_to_direct_call": statistics.median(ratios),
        "ratios": ratios,
        "daemon_high_water": bench.runtime.gate.high_water,
    }


# -- fan-out cancel ------------------------------------------------------------------------


async def cancel_once(bench: Bench, n: int) -> float:
    parent = await bench.open_parent()
    await parent.prompt(f"{script.FANOUT_STREAM} {n}")
    with trio.fail_after(120):
        while True:
            listed = await parent.list_subagents()
            streaming = [i for i in listed if i.activity == "model request (step 2)"]
            if len(streaming) == n and len(children("sleep")) >= n:
                break
            await trio.sleep(0.05)
    start = await _settled()
    await parent.cancel()
    elapsed = (time.perf_counter() - start) * 1000
    left = children("sleep")
    bench.check(not left, f"{len(left)} sleep processes left after the cancel")
    listed = await parent.list_subagents()
    bench.check(
        all(i.state == "interrupted" for i in listed) and len(listed) == min(n, 50),
        f"after the cancel: {sorted({i.state for i in listed})}",
    )
    bench.check(bench.runtime.running_ids == (), "subagents still registered after the cancel")
    await parent.close()
    return elapsed


async def _settled() -> float:
    """Collect, let the loop catch up, and return the start time of a measured cancel.

    A full collection takes 150-300 ms, and the stream data piling up meanwhile
    would otherwise be measured as cancel latency (the cancel waited behind it).
    """
    gc.collect()
    await trio.sleep(0.05)  # every stream has deltas flowing, no backlog
    return time.perf_counter()


def stream_request(requests: list[ModelRequest]) -> ModelRequest:
    """A stream child's second request (after its tool result): the endless stream."""
    for request in requests:
        if any(script.STREAM_GOAL in block.text for block in request.system) and any(
            isinstance(block, ToolResultBlock) for m in request.messages for block in m.content
        ):
            return request
    raise RuntimeError("no stream child request was recorded")


async def direct_cancel_once(bench: Bench, request: ModelRequest, n: int) -> float:
    """The same work done the plainest way: ``n`` trio tasks, each with a ``sleep 300``
    in its own process group and the same endless model stream, cancelled by one scope
    until every stream is closed and every group SIGTERMed and reaped. No actors, no
    store, nothing recorded: the floor the actor tree's cancel is compared with."""
    streaming = 0
    ready = trio.Event()

    def first_event(_: object) -> None:
        nonlocal streaming
        streaming += 1
        if streaming == n:
            ready.set()

    async def child() -> None:
        process = await trio.lowlevel.open_process(
            ["sleep", "300"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        seen = False

        def sink(event: object) -> None:
            nonlocal seen
            if not seen:
                seen = True
                first_event(event)

        try:
            await bench.client.complete(request, sink)
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(5):
                signal_group(process.pid, signal.SIGTERM)
                await process.wait()
            for pipe in (process.stdin, process.stdout):
                if isinstance(pipe, trio.lowlevel.FdStream):
                    pipe.close()

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            for _ in range(n):
                nursery.start_soon(child)
            await ready.wait()  # every process started, every stream flowing
            start = await _settled()
            nursery.cancel_scope.cancel()
    elapsed = (time.perf_counter() - start) * 1000
    left = children("sleep")
    bench.check(not left, f"{len(left)} sleep processes left after the direct cancel")
    return elapsed


async def cancels(bench: Bench, sizes: Sizes) -> dict[str, Any]:
    """Actor-tree cancels, each followed by a direct one, so both see the same machine."""
    n = sizes.cancel_children
    recorded: list[ModelRequest] = []
    bench.client.recording = recorded
    await cancel_once(bench, n)  # warm-up, and the stream request to replay
    bench.client.recording = None
    request = stream_request(recorded)
    await direct_cancel_once(bench, request, n)  # warm-up
    ours, direct = [], []
    for _ in range(sizes.cancels):
        ours.append(await cancel_once(bench, n))
        direct.append(await direct_cancel_once(bench, request, n))
    mine, floor = percentiles(ours), percentiles(direct)
    return {
        **mine,
        "samples": ours,
        "direct": {**floor, "samples": direct},
        "ratio_p50": mine["p50"] / floor["p50"],
        "ratio_p99": mine["p99"] / floor["p99"],
    }


# -- idle child memory ---------------------------------------------------------------------


async def idle_children(bench: Bench, sizes: Sizes) -> dict[str, Any]:
    parent = await bench.open_parent()
    deps = bench.deps()
    task = TaskSpec(goal="idle bench child")
    registry = child_registry(deps.registry, task, bench.runtime.config.blocked_tools, False)
    child_d = child_deps(deps, registry, None)
    refs = []
    gc.collect()
    before = rss_bytes()
    tracemalloc.start()
    for i in range(sizes.idle):
        cfg = child_config(bench.config, bench.runtime.config, f"sa-{i}", task)
        info = await bench.store.create_session(model=MODEL, parent_id=parent.id)
        actor = SessionActor(cfg, child_d, info.id, EventHub(info.id))
        refs.append(await bench.system.spawn(actor, name=f"idle-{i}"))
    gc.collect()
    heap, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = rss_bytes()
    for ref in refs:
        await ref.stop()
    await parent.close()
    return {
        "kb": heap / sizes.idle / 1024,
        "rss_kb": (after - before) / sizes.idle / 1024,
        "n": sizes.idle,
    }


# -- the run -------------------------------------------------------------------------------


async def measure_with(url: str, sizes: Sizes, reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-subagents-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        config = SessionConfig(
            model=MODEL, cwd=work, spill_dir=Path(tmp) / "spill", load_context_files=False
        )
        client = RecordingClient(
            api_key=API_KEY, base_url=url, trust_env=False, retry=RetryPolicy()
        )
        subagents = SubagentConfig(
            max_concurrent_children=max(sizes.children, sizes.cancel_children),
            max_total_children=max(sizes.sessions * sizes.children, sizes.cancel_children),
            queue_capacity=1000,
            max_batch=max(sizes.children, sizes.cancel_children),
        )
        async with open_system("bench-subagents", shutdown_timeout=60.0) as system, client:
            store = await spawn_store(system, Path(tmp) / "data", register=None)
            bench = Bench(system, store, client, config, SubagentRuntime(subagents))
            idle = await idle_children(bench, sizes)  # first: a fresh heap shows in the RSS
            out = await fanout(bench, sizes, reps)
            cancel = await cancels(bench, sizes)
    return {
        "fanout_children": out,
        "fanout_cancel_p99_ms": cancel["p99"],
        "fanout_cancel_ratio_p50": cancel["ratio_p50"],
        "fanout_cancel_ms": cancel,
        "idle_child_kb": idle["kb"],
        "problems": bench.problems,
        "details": {"sizes": attrs.asdict(sizes), "reps": reps, "idle": idle},
    }


def measure(sizes: Sizes, reps: int) -> dict[str, Any]:
    from actors import tune_gc

    tune_gc()
    with scripted_fake() as url:
        results = trio.run(measure_with, url, sizes, reps)
    results["targets_met"] = targets_met(results, TARGETS)
    return results


def render(results: dict[str, Any]) -> str:
    f = results["fanout_children"]
    c = results["fanout_cancel_ms"]
    d = c["direct"]
    met = results["targets_met"]
    rows = [
        (
            "fanout_children",
            f"{f['children']}",
            f"all completed in {f['wall_s']:.2f}s wall; {f['cpu_us_per_child_turn']:.0f} us CPU "
            f"per child turn = {f['ratio_to_direct_call']:.1f}x a direct model call "
            f"({f['direct_cpu_us_per_call']:.0f} us)",
            "-",
            "-",
        ),
        (
            "fanout_cancel_ratio_p50",
            f"{c['ratio_p50']:.2f}",
            f"p50 {c['p50']:.1f} ms over the same cancel done directly in trio, interleaved "
            f"(p50 {d['p50']:.1f}, p99 {d['p99']:.1f} ms; p99 ratio {c['ratio_p99']:.2f})",
            "<= 2.0",
            "yes" if met["fanout_cancel_ratio_p50"] else "NO",
        ),
        (
            "fanout_cancel_p99_ms",
            f"{results['fanout_cancel_p99_ms']:.1f}",
            f"absolute, beside the ratio: max {c['max']:.1f} ms over {c['n']} cancels",
            "-",
            "-",
        ),
        (
            "idle_child_kb",
            f"{results['idle_child_kb']:.0f}",
            f"Python heap per idle child session (RSS {results['details']['idle']['rss_kb']:.0f})",
            "-",
            "-",
        ),
    ]
    return figures_table(rows, results["problems"])


def main(json_output: bool, quick: bool, reps: int) -> int:
    return report(measure(Sizes.quick() if quick else Sizes(), reps), render, json_output)
