"""``python -m bench session``: what a session costs over its parts, and how fast it stops.

The model is the fake provider in a child process (``bench/session_fake.py``,
fixed rules keyed on markers in the prompt), so its CPU is not charged to us.
The cyclic collector runs with the daemon's thresholds (``actors.tune_gc``).
The store is a real SQLite file in a temporary directory; its worker thread is
part of this process, so its CPU is part of the session's. Figures:

- ``turn_overhead_ratio``: CPU (``time.process_time``) of turns through the
  session, each turn = model call -> three cheap tool calls (``read_file``
  a.txt, ``terminal true``, ``read_file`` b.txt) -> model answer, divided by
  the CPU of the same work done directly: ``ModelClient.complete`` with the
  very requests the session sent (recorded; on a client of its own, which
  encodes each message once as the session's does), ``registry.call`` for
  the same tool calls, and the very store writes the session made (recorded
  with where they fell between its model calls, replayed one request, one
  commit each into a session row of the baseline's own, which must end up
  holding the same messages). So the ratio prices the runtime (actors,
  mailboxes, events, the turn loop), not the persistence both sides pay.
  Median of ``--reps`` repetitions, each of 10 fresh sessions of
  4 turns (a short conversation: a long history makes the model calls dearer
  and hides the session's own cost), each session replayed directly right
  after it; only the turns are timed, not the sessions' start and close.
  Target <= 1.3.
- ``cancel_p99_ms``: ``session.cancel()`` call to return (it returns when
  the session is idle and the transcript persisted), alternately while a
  ``terminal sleep 30`` runs and while the model reply streams (a delta every
  5 ms). After each cancel the stored transcript must have no open tool use
  and no ``sleep`` may be left running. Target <= 50.
- ``steer_delivery_ms``: a steer sent while a tool batch runs (``terminal``
  ``cat steer.fifo``, blocked until the benchmark writes to the FIFO right
  after the steer is accepted) to its row being in the store (the
  ``SteerDelivered`` event, published once the write returned). The next model
  request must carry it (the fake then answers ``steer received``).

A broken invariant (a turn that did not complete, a direct call that failed, a
cancel that left an open tool use or a running ``sleep``, a steer missing from
the store or the next request) is listed under ``problems`` and makes the
command exit 1.
"""

from __future__ import annotations

import errno
import gc
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

import attrs
import trio

from actors import ActorSystem, open_system
from hermes.model import (
    EventSink,
    Message,
    ModelClient,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    ToolResultBlock,
)
from hermes.session import (
    SessionConfig,
    SessionDeps,
    SessionEvent,
    SessionHandle,
    Subscriber,
    TurnEnd,
    start_session,
)
from hermes.store import (
    AppendMessages,
    ForgetProcess,
    RecordProcessFinish,
    RecordProcessStart,
    ReplaceLast,
    Request,
    StoreClient,
    spawn_store,
)
from hermes.tools import ToolCall, ToolContext, ToolRegistry, default_registry

from . import session_fake as script
from .child import serving
from .stats import figures_table, report, targets_met

API_KEY = "bench-key"
MODEL = "claude-bench"
R = TypeVar("R")
TARGETS: dict[str, tuple[str, float]] = {
    "turn_overhead_ratio": ("<=", 1.3),
    "cancel_p99_ms": ("<=", 50.0),
}


@attrs.frozen
class Sizes:
    sessions: int = 10
    """Fresh sessions per repetition of the overhead measurement..."""
    turns_per_session: int = 4
    """...each running this many turns (the history grows to 16 messages)."""
    cancels: int = 200
    cancels_per_session: int = 50
    """A fresh session after this many cancels (each one leaves three messages)."""
    steers: int = 50

    @classmethod
    def quick(cls) -> Sizes:
        return cls(sessions=1, turns_per_session=3, cancels=10, cancels_per_session=5, steers=4)


class RecordingClient(ModelClient):
    """A ``ModelClient`` that keeps the requests it is given while ``recording`` is a list."""

    recording: list[ModelRequest] | None = None

    async def complete(
        self, request: ModelRequest, on_event: EventSink | None = None
    ) -> ModelResponse:
        if self.recording is not None:
            self.recording.append(request)
        return await super().complete(request, on_event)


@attrs.frozen
class Write:
    """A store write the session made, and how many model calls had started before it."""

    calls: int
    request: Request[Any]


class CountingStore(StoreClient):
    """A ``StoreClient`` that counts the write requests it sends and, while ``log``
    is a list, keeps them, each tagged with ``len(clock.recording)``."""

    writes = 0
    log: list[Write] | None = None
    clock: RecordingClient | None = None

    async def request(self, request: Request[R], timeout: float | None = None) -> R:
        if request.writes:
            self.writes += 1
            if self.log is not None:
                recording = self.clock.recording if self.clock is not None else None
                self.log.append(Write(len(recording or ()), request))
        return await super().request(request, timeout)


@contextmanager
def scripted_fake() -> Iterator[str]:
    """Start ``bench.session_fake`` in a child process; yield its base URL."""
    with serving(["bench.session_fake", "--api-key", API_KEY]) as (url, _):
        yield url


@attrs.define
class Bench:
    system: ActorSystem
    store: CountingStore
    client: RecordingClient
    direct_client: ModelClient
    """For the direct calls: a client of their own, so its ``WireCache`` encodes each
    message the first time it sees it, as the session's did (with the session's client
    the replay would find every message already encoded)."""
    registry: ToolRegistry
    config: SessionConfig
    problems: list[str] = attrs.field(factory=list)

    async def open_session(self) -> SessionHandle:
        deps = SessionDeps(store=self.store, client=self.client, registry=self.registry)
        return await start_session(self.system, self.config, deps)

    def check(self, ok: bool, problem: str) -> None:
        if not ok and len(self.problems) < 20:
            self.problems.append(problem)


@asynccontextmanager
async def open_bench(url: str, tmp: Path) -> AsyncIterator[Bench]:
    work = tmp / "work"
    work.mkdir()
    (work / "a.txt").write_text("".join(f"line {i} of a\n" for i in range(20)))
    (work / "b.txt").write_text("".join(f"line {i} of b\n" for i in range(20)))
    os.mkfifo(work / script.FIFO_NAME)
    config = SessionConfig(model=MODEL, cwd=work, spill_dir=tmp / "spill", load_context_files=False)
    client = RecordingClient(api_key=API_KEY, base_url=url, trust_env=False, retry=RetryPolicy())
    direct = ModelClient(api_key=API_KEY, base_url=url, trust_env=False, retry=RetryPolicy())
    async with open_system("bench-session", shutdown_timeout=30.0) as system, client, direct:
        spawned = await spawn_store(system, tmp / "data", register=None)
        store = CountingStore(spawned.target, timeout=spawned.timeout, lane=spawned.lane)
        store.clock = client
        yield Bench(system, store, client, direct, default_registry(), config)


# -- turn overhead -----------------------------------------------------------------------


@attrs.frozen
class Replay:
    """What one session's timed turns did, for the direct side to do again."""

    requests: list[ModelRequest]
    writes: list[Write]
    messages: tuple[Message, ...]
    """The session's stored transcript after its turns."""


async def session_turns(bench: Bench, turns: int) -> tuple[float, int, Replay]:
    """CPU seconds of ``turns`` turns in a fresh session, its store writes, what to replay.

    Only the turns are timed, not the session's start and close.
    """
    cpu = 0.0
    writes = 0
    recorded: list[ModelRequest] = []
    logged: list[Write] = []
    handle = await bench.open_session()
    bench.client.recording = recorded
    bench.store.log = logged
    for _ in range(turns):
        before = bench.store.writes
        start = time.process_time()
        result = await handle.run(script.THREE_TOOLS)
        cpu += time.process_time() - start
        writes += bench.store.writes - before
        bench.check(
            result.reason is TurnEnd.COMPLETED and result.text == script.DONE,
            f"turn ended {result.reason.value} ({result.detail}) with {result.text!r}",
        )
    bench.client.recording = None
    bench.store.log = None
    transcript = await bench.store.load(handle.id)
    await handle.close()
    messages = transcript.messages
    bench.check(len(messages) == 4 * turns, f"{len(messages)} messages after {turns} turns")
    results = [b for m in messages for b in m.content if isinstance(b, ToolResultBlock)]
    bench.check(
        len(results) == 3 * turns and not any(r.is_error for r in results),
        f"{len(results)} tool results for {turns} turns: {[r for r in results if r.is_error]}",
    )
    bench.check(len(recorded) == 2 * turns, f"{len(recorded)} model calls for {turns} turns")
    foreign = {type(w.request).__name__ for w in logged if not isinstance(w.request, REPLAYED)}
    bench.check(not foreign, f"the session made store writes the replay cannot retarget: {foreign}")
    return cpu, writes, Replay(recorded, logged, messages)


REPLAYED = (AppendMessages, ReplaceLast, RecordProcessStart, RecordProcessFinish, ForgetProcess)


def retarget(request: Request[R], session_id: str, suffix: str) -> Request[R]:
    """The same write, into ``session_id``'s row (a process row under its id + ``suffix``)."""
    if isinstance(request, AppendMessages | ReplaceLast):
        # The baseline's row has never been claimed (epoch 0): its writes carry that,
        # so both sides pay the writer-epoch check.
        writer = None if request.writer is None else 0
        return cast(Request[R], attrs.evolve(request, session_id=session_id, writer=writer))
    if isinstance(request, RecordProcessStart):
        record = attrs.evolve(request.record, id=request.record.id + suffix, session_id=session_id)
        return cast(Request[R], attrs.evolve(request, record=record))
    if isinstance(request, RecordProcessFinish | ForgetProcess):
        return cast(Request[R], attrs.evolve(request, process_id=request.process_id + suffix))
    raise ValueError(f"the replay cannot retarget a {type(request).__name__}")


async def direct_turns(bench: Bench, replay: Replay) -> tuple[float, int]:
    """CPU seconds of the same model calls, tool calls and store writes, without the
    session, and the number of writes it made.

    Each write runs where the session's did: those made before model call ``i``
    started run before it; of those after it, the first (the reply) runs before its
    tool calls, the rest after them. One request, one commit each, as the
    session's (the store's lane runs a write at once when the store is idle).
    """
    ctx = ToolContext.create(bench.config.cwd, bench.config.spill_dir)
    client, registry, store = bench.direct_client, bench.registry, bench.store
    row = await store.create_session(model=MODEL)
    writes = [
        retarget(w.request, row.id, "-direct")
        for w in replay.writes
        if isinstance(w.request, REPLAYED)
    ]
    tags = [w.calls for w in replay.writes if isinstance(w.request, REPLAYED)]
    done = 0
    start = time.process_time()
    for index, request in enumerate(replay.requests):
        while done < len(writes) and tags[done] <= index:
            await store.request(writes[done])
            done += 1
        response = await client.complete(request)
        if done < len(writes) and tags[done] == index + 1:
            await store.request(writes[done])  # the reply, before its tools run
            done += 1
        for use in response.message.tool_uses():
            outcome = await registry.call(ToolCall.from_block(use), ctx)
            bench.check(not outcome.is_error, f"direct {use.name} failed: {outcome.content}")
        bench.check(
            bool(response.message.tool_uses()) == (index % 2 == 0),
            f"direct request {index} got {response.message.content}",
        )
    for write in writes[done:]:
        await store.request(write)
    cpu = time.process_time() - start
    if writes:
        stored = (await store.load(row.id)).messages
        bench.check(
            len(stored) == len(replay.messages)
            and all(a.role == b.role for a, b in zip(stored, replay.messages, strict=True)),
            f"the direct writes left {len(stored)} messages, the session {len(replay.messages)}",
        )
    await store.end_session(row.id, "closed")
    return cpu, len(writes)


async def turn_overhead(bench: Bench, sizes: Sizes, reps: int) -> dict[str, Any]:
    """Each session's turns are replayed directly right after it, so both see the same load."""
    _, _, warm = await session_turns(bench, 2)  # warm-up (imports, pools)
    await direct_turns(bench, warm)
    turns = sizes.sessions * sizes.turns_per_session
    ratios, session_us, direct_us, writes, direct_writes = [], [], [], [], []
    for _ in range(reps):
        gc.collect()
        session_cpu = direct_cpu = 0.0
        wrote = replayed = 0
        for _ in range(sizes.sessions):
            cpu, count, replay = await session_turns(bench, sizes.turns_per_session)
            session_cpu += cpu
            wrote += count
            cpu, count = await direct_turns(bench, replay)
            direct_cpu += cpu
            replayed += count
        ratios.append(session_cpu / direct_cpu)
        session_us.append(session_cpu / turns * 1e6)
        direct_us.append(direct_cpu / turns * 1e6)
        writes.append(wrote / turns)
        direct_writes.append(replayed / turns)
    return {
        "ratio": statistics.median(ratios),
        "ratios": ratios,
        "session_cpu_us_per_turn": statistics.median(session_us),
        "direct_cpu_us_per_turn": statistics.median(direct_us),
        "session_cpu_us_per_turn_reps": session_us,
        "direct_cpu_us_per_turn_reps": direct_us,
        "store_writes_per_turn": statistics.median(writes),
        "direct_store_writes_per_turn": statistics.median(direct_writes),
    }


# -- events, processes ---------------------------------------------------------------------


async def wait_for(sub: Subscriber, kind: str, timeout: float = 10.0) -> SessionEvent:
    """The next event of type ``kind`` (earlier ones are skipped)."""
    with trio.fail_after(timeout):
        async for event in sub.receive:
            if event.type == kind:
                return event
    raise RuntimeError(f"the event stream ended before a {kind} event")


def children(name: str) -> list[int]:
    """Pids of this process's children whose command is ``name``."""
    found = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                pids = f.read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == name:
                        found.append(int(pid))
            except OSError:
                continue
    return found


async def wait_until_running(name: str, timeout: float = 10.0) -> None:
    """Poll until a child process named ``name`` exists (it cannot signal us)."""
    with trio.fail_after(timeout):
        while not children(name):  # noqa: ASYNC110 - polling /proc, there is no event
            await trio.sleep(0.001)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = statistics.quantiles(ordered, n=100, method="inclusive")[98] if len(ordered) > 1 else 0
    return {
        "p50": statistics.median(ordered),
        "p99": p99 or ordered[-1],
        "max": ordered[-1],
        "n": len(ordered),
    }


# -- cancel ----------------------------------------------------------------------------------


async def cancels(bench: Bench, sizes: Sizes) -> dict[str, Any]:
    samples: dict[str, list[float]] = {"tool": [], "stream": []}
    open_uses = leftover = 0
    handle: SessionHandle | None = None
    for i in range(sizes.cancels):
        if i % sizes.cancels_per_session == 0:
            if handle is not None:
                await handle.close()
            handle = await bench.open_session()
        assert handle is not None
        kind = "tool" if i % 2 == 0 else "stream"
        with handle.subscribe() as sub:
            await handle.prompt(script.SLEEP if kind == "tool" else script.STREAM)
            if kind == "tool":
                await wait_for(sub, "ToolStarted")
                await wait_until_running("sleep")
            else:
                await wait_for(sub, "TextDelta")
            gc.collect()
            start = time.perf_counter()
            cancelled = await handle.cancel()
            samples[kind].append((time.perf_counter() - start) * 1000)
        result = cancelled.result
        bench.check(
            result is not None and result.reason is TurnEnd.CANCELLED,
            f"cancel {i} ({kind}): {result}",
        )
        transcript = await bench.store.load(handle.id)
        if transcript.open_tool_uses:
            open_uses += 1
        if children("sleep"):
            leftover += 1
        state = await handle.state()
        bench.check(not state.busy, f"cancel {i} ({kind}): the session is still busy")
        bench.check(
            state.messages == transcript.next_seq,
            f"cancel {i} ({kind}): {state.messages} messages in memory, "
            f"{transcript.next_seq} in the store",
        )
        bench.check(settled(kind, transcript.messages), f"cancel {i} ({kind}): {transcript}")
    if handle is not None:
        await handle.close()
    bench.check(open_uses == 0, f"{open_uses} cancels left open tool uses in the store")
    bench.check(leftover == 0, f"{leftover} cancels left a sleep process running")
    everything = samples["tool"] + samples["stream"]
    return {
        "all": percentiles(everything),
        "tool": percentiles(samples["tool"]),
        "stream": percentiles(samples["stream"]) if samples["stream"] else None,
        "open_tool_uses_after_cancel": open_uses,
        "sleep_left_running": leftover,
    }


def settled(kind: str, messages: tuple[Message, ...]) -> bool:
    """The stored end of a cancelled turn: the sleep's error result, or the marked partial."""
    if len(messages) < 2:
        return False
    last, reply = messages[-1], messages[-2]
    if kind == "tool":
        uses = reply.tool_uses()
        results = [b for b in last.content if isinstance(b, ToolResultBlock)]
        return (
            last.role == "user"
            and len(uses) == 1
            and [r.tool_use_id for r in results] == [uses[0].id]
            and results[0].is_error
        )
    return last.role == "assistant" and last.text().endswith("[cancelled]")


# -- steer -----------------------------------------------------------------------------------


async def open_fifo_writer(path: Path, timeout: float = 10.0) -> int:
    """Open ``path`` for writing once its reader (the tool's ``cat``) has it open."""
    with trio.fail_after(timeout):
        while True:
            try:
                return os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as error:
                if error.errno != errno.ENXIO:
                    raise
            await trio.sleep(0.001)


async def steers(bench: Bench, sizes: Sizes) -> dict[str, Any]:
    fifo = bench.config.cwd / script.FIFO_NAME
    handle = await bench.open_session()
    samples: list[float] = []
    after_tool: list[float] = []
    for i in range(sizes.steers):
        note = f"{script.STEER_NOTE} {i}"
        with handle.subscribe() as sub:
            await handle.prompt(script.WAIT_FIFO)
            await wait_for(sub, "ToolStarted")
            fd = await open_fifo_writer(fifo)
            gc.collect()
            start = time.perf_counter()
            accepted = await handle.steer(note)
            os.write(fd, b"go\n")
            os.close(fd)
            await wait_for(sub, "ToolCompleted")
            tool_done = time.perf_counter()
            delivered = await wait_for(sub, "SteerDelivered")
            end = time.perf_counter()
            samples.append((end - start) * 1000)
            after_tool.append((end - tool_done) * 1000)
            completed = await wait_for(sub, "TurnCompleted")
        bench.check(accepted.how == "steered", f"steer {i} was {accepted.how}")
        bench.check(
            completed.payload.text == script.STEER_ACK,
            f"steer {i}: the next model request did not carry it ({completed.payload})",
        )
        transcript = await bench.store.load(handle.id)
        row = transcript.messages[delivered.payload.seq]
        bench.check(
            row.role == "user"
            and any(isinstance(b, ToolResultBlock) for b in row.content)
            and note in row.text(),
            f"steer {i}: row {delivered.payload.seq} is {row}",
        )
    await handle.close()
    return {**percentiles(samples), "tool_completed_to_row": percentiles(after_tool)}


# -- the run ---------------------------------------------------------------------------------


async def measure_with(url: str, sizes: Sizes, reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-session-") as tmp:
        async with open_bench(url, Path(tmp)) as bench:
            overhead = await turn_overhead(bench, sizes, reps)
            cancel = await cancels(bench, sizes)
            steer = await steers(bench, sizes)
    return {
        "turn_overhead_ratio": overhead["ratio"],
        "cancel_p99_ms": cancel["all"]["p99"],
        "cancel_ms": cancel,
        "steer_delivery_ms": steer,
        "problems": bench.problems,
        "details": {"turn_overhead": overhead, "sizes": attrs.asdict(sizes), "reps": reps},
    }


def measure(sizes: Sizes, reps: int) -> dict[str, Any]:
    from actors import tune_gc

    tune_gc()  # as the daemon runs (and ``bench subagents``); the direct calls share it
    with scripted_fake() as url:
        results = trio.run(measure_with, url, sizes, reps)
    results["targets_met"] = targets_met(results, TARGETS)
    return results


def render(results: dict[str, Any]) -> str:
    o = results["details"]["turn_overhead"]
    c = results["cancel_ms"]
    s = results["steer_delivery_ms"]
    met = results["targets_met"]
    reps = ", ".join(f"{r:.2f}" for r in o["ratios"])
    rows = [
        (
            "turn_overhead_ratio",
            f"{results['turn_overhead_ratio']:.3f}",
            f"session {o['session_cpu_us_per_turn']:.0f} us CPU/turn "
            f"({o['store_writes_per_turn']:g} store writes) vs direct "
            f"{o['direct_cpu_us_per_turn']:.0f} us ({o['direct_store_writes_per_turn']:g}, "
            f"the same; reps: {reps})",
            "<= 1.3",
            "yes" if met["turn_overhead_ratio"] else "NO",
        ),
        (
            "cancel_p99_ms",
            f"{results['cancel_p99_ms']:.1f}",
            f"p50 {c['all']['p50']:.1f}, max {c['all']['max']:.1f} ms over {c['all']['n']}; "
            f"sleep p99 {c['tool']['p99']:.1f}"
            + (f", stream p99 {c['stream']['p99']:.1f}" if c["stream"] else ""),
            "<= 50",
            "yes" if met["cancel_p99_ms"] else "NO",
        ),
        (
            "steer_delivery_ms",
            f"{s['p50']:.1f}",
            f"p50; p99 {s['p99']:.1f}, max {s['max']:.1f} ms over {s['n']}",
            "-",
            "-",
        ),
    ]
    return figures_table(rows, results["problems"])


def main(json_output: bool, quick: bool, reps: int) -> int:
    return report(measure(Sizes.quick() if quick else Sizes(), reps), render, json_output)
