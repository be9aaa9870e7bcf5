"""``python -m bench compression``: what a compaction costs; how fast a review gets out of the way.

Figures:

- ``compaction_ms``: compacting a 200-message transcript with tool calls
  (prompts, ``read_file``/``terminal`` calls whose results are partly large
  enough to be pruned, answers), excluding the summary call: the model's
  answer is a fixed summary from a fake summariser. Timed: ``plan_ms``
  (``plan_compaction``: prune, cut, the summary prompt), ``finish_ms``
  (``accept_summary`` of the summariser's text and ``finish_plan``),
  ``validate_ms`` (``validate_transcript``) and ``commit_ms``
  (``StoreClient.compact`` through the store actor on a real SQLite file in
  a temporary directory: rows archived, the new ones written, one
  transaction). Each repetition compacts a fresh session holding the same
  transcript; the median of ``--reps`` is reported. Baseline:
  ``load_ms``, a ``StoreClient.load`` of the same 200 rows in the same run
  (``compaction_load_ratio`` = ``compaction_ms`` / ``load_ms``). Target <= 50 ms.
- ``review_cancel_p99_ms``: a real session (``MemoryStore``, review after
  every turn) against the fake provider in this process; the review's second
  reply streams forever (a delta every 10 ms) after its first reply drafted a
  memory add. Repeatedly: a turn completes, its review starts and is
  mid-stream, then a new prompt arrives; measured from just before the
  ``prompt`` call to the ``ReviewCompleted(cancelled)`` event, published by
  the session once the reviewer actor has exited (its scope is gone). The
  new prompt's turn then completes and starts the next review. Also
  reported: when the prompt call returned, and when the fake provider saw the
  review's connection close. Baseline: the same streaming request made
  with ``ModelClient.complete`` in a bare trio cancel scope, from
  ``cancel()`` to the task being done. Target p99 <= 10 ms.

A broken invariant (a compaction that is not valid or not recorded, an
archive that lost rows, a review that was not cancelled or wrote memory, a
turn that did not complete) is listed under ``problems`` and makes the
command exit 1.
"""

from __future__ import annotations

import gc
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import trio

from actors import ActorSystem, open_system
from hermes.compression import (
    SECTIONS,
    CompressionSettings,
    accept_summary,
    estimate_tokens,
    finish_plan,
    plan_compaction,
    validate_transcript,
)
from hermes.fake import Endless, FakeProvider, MessagesRequest, Reply, ToolUse, open_fake_provider
from hermes.memory import MemoryStore, MemoryTool
from hermes.model import (
    Message,
    ModelClient,
    ModelRequest,
    RetryPolicy,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from hermes.review import REVIEW_PROMPT, ReviewSettings
from hermes.session import (
    SessionConfig,
    SessionDeps,
    SessionEvent,
    SessionHandle,
    TurnEnd,
    start_session,
)
from hermes.store import StoreClient, spawn_store
from hermes.tools import default_registry

from .stats import figures_table, report, targets_met

API_KEY = "bench-key"
MODEL = "claude-bench"
TARGETS: dict[str, tuple[str, float]] = {
    "compaction_ms": ("<=", 50.0),
    "review_cancel_p99_ms": ("<=", 10.0),
}
MAX_TOKENS = 4_096
REVIEW_MARK = REVIEW_PROMPT[:40]


@attrs.frozen
class Sizes:
    messages: int = 200
    """Messages in the transcript compacted (tool calls included)."""
    reviews: int = 200
    """Review cancels measured..."""
    reviews_per_session: int = 50
    """...in fresh sessions of this many turns."""
    raw_cancels: int = 50

    @classmethod
    def quick(cls) -> Sizes:
        return cls(messages=60, reviews=10, reviews_per_session=5, raw_cancels=5)


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    if not ordered:
        return {"p50": 0.0, "p99": 0.0, "max": 0.0, "n": 0}
    p99 = statistics.quantiles(ordered, n=100, method="inclusive")[98] if len(ordered) > 1 else 0
    return {
        "p50": statistics.median(ordered),
        "p99": p99 or ordered[-1],
        "max": ordered[-1],
        "n": len(ordered),
    }


@attrs.define
class Problems:
    items: list[str] = attrs.field(factory=list)

    def check(self, ok: bool, problem: str) -> None:
        if not ok and len(self.items) < 20:
            self.items.append(problem)


# -- compaction --------------------------------------------------------------------------------


def transcript(count: int) -> list[Message]:
    """``count`` messages (even, >= 4): turns of a prompt, tool calls with results, an answer.

    A full turn is 8 messages (three tool calls); the last turn has as many
    calls as fit. Every third result is 6,000 characters (old ones get pruned),
    the rest 300.
    """
    if count < 4 or count % 2:
        raise ValueError(f"transcript: an even count >= 4 is needed, got {count}")
    out: list[Message] = []
    call = turn = 0
    while len(out) < count:
        turn += 1
        steps = min(3, (count - len(out) - 2) // 2)
        out.append(Message.user(f"Request {turn}: look at module {turn} and fix what is broken."))
        for _ in range(steps):
            call += 1
            use_id = f"toolu_bench_{call:05d}"
            if call % 2:
                use = ToolUseBlock(use_id, "read_file", {"path": f"src/module_{turn}.py"})
            else:
                use = ToolUseBlock(use_id, "terminal", {"command": f"pytest tests/test_{turn}.py"})
            size = 6_000 if call % 3 == 0 else 300
            output = "".join(f"line {i} of the output of call {call}\n" for i in range(size // 30))
            out.append(Message("assistant", (TextBlock(f"Checking step {call}."), use)))
            out.append(Message("user", (ToolResultBlock(use_id, output),)))
        out.append(Message("assistant", (TextBlock(f"Module {turn} is fixed: the tests pass."),)))
    return out


def fake_summary(middle: list[Message] | tuple[Message, ...]) -> str:
    """What the fake summariser answers: the five headings, a line each (deterministic)."""
    facts = [
        f"{len(middle)} messages were compacted.",
        "Modules were read and their tests run; the fixes pass.",
        "The user wants every module fixed in order.",
        "src/module_*.py, tests/test_*.py; pytest.",
        "Summarise the changes for the user.",
    ]
    return "\n\n".join(f"## {s}\n{f}" for s, f in zip(SECTIONS, facts, strict=True))


async def compaction(
    store: StoreClient, sizes: Sizes, reps: int, problems: Problems
) -> dict[str, Any]:
    messages = transcript(sizes.messages)
    settings = CompressionSettings()
    tools = default_registry().specs()
    # A window whose threshold the transcript has just reached: compaction is due now.
    window = 2 * estimate_tokens(messages, (), tools) + MAX_TOKENS
    parts: dict[str, list[float]] = {
        "plan_ms": [],
        "finish_ms": [],
        "validate_ms": [],
        "commit_ms": [],
        "compaction_ms": [],
        "load_ms": [],
    }
    after_count = pruned = 0
    for rep in range(reps + 1):  # the first is a warm-up
        info = await store.create_session(model=MODEL, title=f"compaction {rep}")
        for message in messages:  # set-up, not timed
            await store.append(info.id, message)
        current = estimate_tokens(messages, (), tools)
        gc.collect()
        start = time.perf_counter()
        plan = plan_compaction(
            messages,
            settings,
            context_window=window,
            max_tokens=MAX_TOKENS,
            current_tokens=current,
        )
        planned = time.perf_counter()
        if plan is None:
            problems.check(False, f"rep {rep}: nothing to compact in {len(messages)} messages")
            continue
        text = accept_summary(fake_summary(plan.split.middle), settings)
        compacted = finish_plan(plan, text, "model")
        finished = time.perf_counter()
        invalid = validate_transcript(compacted)
        validated = time.perf_counter()
        after = estimate_tokens(compacted, (), tools)
        record = await store.compact(
            info.id,
            len(messages),
            compacted,
            method="model",
            tokens_before=current,
            tokens_after=after,
        )
        committed = time.perf_counter()
        archive = await store.load(record.archive_id)
        loaded = time.perf_counter()
        problems.check(not invalid, f"rep {rep}: invalid compacted transcript: {invalid[:1]}")
        problems.check(
            archive.messages == tuple(messages), f"rep {rep}: the archive lost or changed rows"
        )
        live = await store.load(info.id)
        problems.check(live.messages == compacted, f"rep {rep}: the live rows are not the plan")
        after_count, pruned = len(compacted), plan.pruned_count
        if rep == 0:
            continue
        parts["plan_ms"].append((planned - start) * 1000)
        parts["finish_ms"].append((finished - planned) * 1000)
        parts["validate_ms"].append((validated - finished) * 1000)
        parts["commit_ms"].append((committed - validated) * 1000)
        parts["compaction_ms"].append((committed - start) * 1000)
        parts["load_ms"].append((loaded - committed) * 1000)
    medians = {key: statistics.median(values) for key, values in parts.items() if values}
    return {
        **medians,
        "ratio": medians["compaction_ms"] / medians["load_ms"] if medians else 0.0,
        "samples": parts,
        "messages_before": len(messages),
        "messages_after": after_count,
        "tool_results_pruned": pruned,
        "context_window": window,
    }


# -- review cancel -----------------------------------------------------------------------------


def is_review(req: MessagesRequest) -> bool:
    return REVIEW_MARK in json.dumps(req.body.get("messages", ()))


def add_reply(req: MessagesRequest) -> Reply | None:
    """The review's first reply drafts an add; the second streams forever."""
    if not is_review(req):
        return None
    if req.tool_results():
        return None  # passes to the endless rule
    return Reply.of(ToolUse("memory", {"action": "add", "content": "Uses the bench."}))


@asynccontextmanager
async def review_session(
    system: ActorSystem, store: StoreClient, client: ModelClient, tmp: Path, memory: MemoryStore
) -> AsyncIterator[SessionHandle]:
    registry = default_registry()
    registry.register(MemoryTool())
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    config = SessionConfig(
        model=MODEL,
        cwd=work,
        spill_dir=tmp / "spill",
        load_context_files=False,
        review=ReviewSettings(interval=1),
    )
    deps = SessionDeps(store=store, client=client, registry=registry, memory=memory)
    handle = await start_session(system, config, deps)
    try:
        yield handle
    finally:
        await handle.close()


async def _mid_stream(fake: FakeProvider, first: int) -> Any:
    """The review's endless request, once it has streamed a few events."""
    while True:
        for record in fake.message_requests[first:]:
            if (
                record.stream
                and record.events_sent >= 3
                and record.in_flight
                and is_review_record(record)
                and record.body["messages"][-1]["role"] == "user"
            ):
                return record
        await trio.sleep(0.001)  # the fake has no event for stream progress


def is_review_record(record: Any) -> bool:
    return REVIEW_MARK in json.dumps(record.body.get("messages", ()))


async def review_cancels(
    system: ActorSystem,
    store: StoreClient,
    client: ModelClient,
    fake: FakeProvider,
    tmp: Path,
    sizes: Sizes,
    problems: Problems,
) -> dict[str, Any]:
    memory = MemoryStore(tmp / "memories")
    gone: list[float] = []
    returned: list[float] = []
    disconnected: list[float] = []
    done = 0
    total = sizes.reviews + 1  # the first is a warm-up
    while done < total:
        async with review_session(system, store, client, tmp, memory) as handle:
            published: dict[str, Any] = {}

            def observe(event: SessionEvent, published: dict[str, Any] = published) -> None:
                if event.type == "ReviewCompleted":
                    published["at"] = time.perf_counter()
                    published["outcome"] = event.payload.outcome

            handle.hub.observe(observe)
            result = await handle.run("first turn")
            problems.check(result.reason is TurnEnd.COMPLETED, f"first turn: {result}")
            for _ in range(min(sizes.reviews_per_session, total - done)):
                record = await _mid_stream(fake, 0)
                published.clear()
                with handle.subscribe() as sub:
                    gc.collect()
                    start = time.perf_counter()
                    start_mono = time.monotonic()
                    accepted = await handle.prompt(f"prompt {done}")
                    back = time.perf_counter()
                    seen = await record.wait_disconnect()
                    async for event in sub.receive:
                        if event.type == "TurnCompleted":
                            break
                end = published.get("at")
                problems.check(accepted.how == "started", f"prompt {done}: {accepted}")
                problems.check(
                    published.get("outcome") == "cancelled" and end is not None,
                    f"review before prompt {done}: {published}",
                )
                problems.check(
                    event.payload.reason == TurnEnd.COMPLETED.value,
                    f"turn after review {done}: {event.payload}",
                )
                if done > 0:
                    if end is not None:
                        gone.append((end - start) * 1000)
                    returned.append((back - start) * 1000)
                    disconnected.append((seen - start_mono) * 1000)
                done += 1
    problems.check(memory.entries("memory") == [], "a cancelled review wrote memory")
    return {
        "gone": percentiles(gone),
        "prompt_returned": percentiles(returned),
        "disconnect_seen": percentiles(disconnected),
    }


async def raw_cancels(client: ModelClient, fake: FakeProvider, sizes: Sizes) -> dict[str, Any]:
    """The baseline: a bare scope around the same kind of streaming request, cancelled."""
    samples: list[float] = []
    request = ModelRequest(model="claude-raw", messages=(Message.user("stream"),), max_tokens=100)
    for _ in range(sizes.raw_cancels):
        finished = trio.Event()
        async with trio.open_nursery() as nursery:
            scope = trio.CancelScope()

            async def call(
                scope: trio.CancelScope = scope, finished: trio.Event = finished
            ) -> None:
                with scope:
                    await client.complete(request)
                finished.set()

            count = len(fake.message_requests)
            nursery.start_soon(call)
            record = await fake.wait_for_requests(count + 1)
            while record.events_sent < 3:  # noqa: ASYNC110 - no event for stream progress
                await trio.sleep(0.001)
            gc.collect()
            start = time.perf_counter()
            scope.cancel()
            await finished.wait()
            samples.append((time.perf_counter() - start) * 1000)
    return percentiles(samples)


# -- the run -----------------------------------------------------------------------------------


async def measure_async(sizes: Sizes, reps: int) -> dict[str, Any]:
    problems = Problems()
    with tempfile.TemporaryDirectory(prefix="bench-compression-") as name:
        tmp = Path(name)
        async with (
            open_system("bench-compression", shutdown_timeout=30.0) as system,
            open_fake_provider(api_key=API_KEY, demo=False) as fake,
        ):
            fake.when(add_reply)
            fake.when(Endless(delta="thinking ", event_delay=0.01), predicate=is_review)
            fake.when(Endless(delta="raw ", event_delay=0.01), model="claude-raw")
            fake.when(Reply.of("ok"))
            retry = RetryPolicy(max_attempts=1, base_delay=0.001, max_delay=0.01, deadline=30)
            async with ModelClient(
                api_key=API_KEY, base_url=fake.base_url, retry=retry, trust_env=False
            ) as client:
                store = await spawn_store(system, tmp / "data", register=None)
                compact = await compaction(store, sizes, reps, problems)
                review = await review_cancels(system, store, client, fake, tmp, sizes, problems)
                raw = await raw_cancels(client, fake, sizes)
            problems.check(fake.errors == [], f"the fake provider failed: {fake.errors[:1]}")
    p99 = review["gone"]["p99"]
    return {
        "compaction_ms": compact.get("compaction_ms", 0.0),
        "plan_ms": compact.get("plan_ms", 0.0),
        "finish_ms": compact.get("finish_ms", 0.0),
        "validate_ms": compact.get("validate_ms", 0.0),
        "commit_ms": compact.get("commit_ms", 0.0),
        "load_ms": compact.get("load_ms", 0.0),
        "compaction_load_ratio": compact["ratio"],
        "review_cancel_p99_ms": p99,
        "review_cancel_ms": review,
        "raw_cancel_ms": raw,
        "review_cancel_raw_ratio": p99 / raw["p99"] if raw["p99"] else 0.0,
        "problems": problems.items,
        "details": {
            "compaction": {k: v for k, v in compact.items() if k != "samples"},
            "sizes": attrs.asdict(sizes),
            "reps": reps,
        },
    }


def measure(sizes: Sizes, reps: int) -> dict[str, Any]:
    results = trio.run(measure_async, sizes, reps)
    results["targets_met"] = targets_met(results, TARGETS)
    return results


def render(results: dict[str, Any]) -> str:
    c = results["details"]["compaction"]
    r = results["review_cancel_ms"]
    raw = results["raw_cancel_ms"]
    met = results["targets_met"]
    rows = [
        (
            "compaction_ms",
            f"{results['compaction_ms']:.2f}",
            f"{c['messages_before']} -> {c['messages_after']} messages "
            f"({c['tool_results_pruned']} results pruned): plan {results['plan_ms']:.2f}, "
            f"finish {results['finish_ms']:.2f}, validate {results['validate_ms']:.2f}, "
            f"commit {results['commit_ms']:.2f} ms; load of the same rows "
            f"{results['load_ms']:.2f} ms (x{results['compaction_load_ratio']:.1f})",
            "<= 50",
            "yes" if met["compaction_ms"] else "NO",
        ),
        (
            "review_cancel_p99_ms",
            f"{results['review_cancel_p99_ms']:.2f}",
            f"p50 {r['gone']['p50']:.2f}, max {r['gone']['max']:.2f} ms over {r['gone']['n']}; "
            f"prompt returned p99 {r['prompt_returned']['p99']:.2f}, stream closed seen p99 "
            f"{r['disconnect_seen']['p99']:.2f}; bare scope cancel p99 {raw['p99']:.2f} ms "
            f"(x{results['review_cancel_raw_ratio']:.1f})",
            "<= 10",
            "yes" if met["review_cancel_p99_ms"] else "NO",
        ),
    ]
    return figures_table(rows, results["problems"])


def main(json_output: bool, quick: bool, reps: int) -> int:
    return report(measure(Sizes.quick() if quick else Sizes(), reps), render, json_output)
