"""Context compaction through a real session: the fake provider scripts both models.

The session runs with a 20,000-token window and 1,000 output tokens, so the
threshold is 9,500 tokens; the main model reports a large prompt through its
usage, and the summary call goes to ``claude-aux`` (scripted by model).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from actors import ActorSystem
from hermes.compression import SUMMARY_MARKER, CompressionSettings, threshold_tokens
from hermes.fake import (
    ErrorReply,
    FakeProvider,
    Hang,
    Outcome,
    Reply,
    RequestRecord,
    ToolUse,
    Usage,
)
from hermes.memory import MemoryStore, MemoryTool
from hermes.model import EventSink, ModelClient, ModelRequest, ModelResponse, RetryPolicy
from hermes.session import (
    SessionConfig,
    SessionDeps,
    SessionHandle,
    Subscriber,
    TurnEnd,
    start_session,
)
from hermes.session.events import SessionEvent
from hermes.store import StoreClient, StoreError
from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome, ToolRegistry, default_registry

from .conftest import KEY, MODEL, SessionFactory
from .control_helpers import next_event, strict_fake, turn_completed
from .helpers import assert_valid, body_texts, system_text

AUX = "claude-aux"
WINDOW = 20_000
MAX_TOKENS = 1_000
SETTINGS = CompressionSettings(
    aux_model=AUX, protect_first=3, protect_last=4, tail_ratio=0.05, summary_timeout=5.0
)
THRESHOLD = threshold_tokens(WINDOW, MAX_TOKENS, SETTINGS)  # 9,500
BIG = 12_000
"""A prompt size over the threshold, reported by the main model."""

SUMMARY = "\n".join(
    [
        "## Goal and user requests",
        "The user asked a series of numbered questions about the project.",
        "## Progress and completed actions",
        "Questions 1 to 3 were answered in detail; nothing was run.",
        "## Key decisions and facts",
        "AUX-SUMMARY-FACT: the answers are long filler text.",
        "## Files and commands touched",
        "None.",
        "## Open problems and next steps",
        "Answer the next question.",
    ]
)
FILLER = "lorem ipsum dolor sit amet " * 45  # ~1,200 characters, ~300 tokens


def big(text: str, tokens: int = BIG) -> Reply:
    """A reply reporting a prompt of ``tokens`` tokens."""
    usage = Usage(
        input_tokens=tokens,
        output_tokens=50,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
    )
    return Reply.of(text, usage=usage)


def small(text: str) -> Reply:
    usage = Usage(
        input_tokens=3_000,
        output_tokens=50,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
    )
    return Reply.of(text, usage=usage)


@pytest.fixture
async def fake() -> AsyncIterator[FakeProvider]:
    async with strict_fake() as provider:
        yield provider


class GatedClient(ModelClient):
    """A real client that holds requests to the aux model while ``gate`` is set and closed."""

    gate: trio.Event | None = None
    held: trio.Event | None = None
    """Set once a summary request is being held."""

    async def complete(
        self, request: ModelRequest, on_event: EventSink | None = None
    ) -> ModelResponse:
        if self.gate is not None and request.model == AUX:
            if self.held is not None:
                self.held.set()
            await self.gate.wait()
        return await super().complete(request, on_event)

    def hold_summaries(self) -> trio.Event:
        """From now on, summary calls wait until the returned event is set."""
        self.gate, self.held = trio.Event(), trio.Event()
        return self.gate


@pytest.fixture
async def client(fake: FakeProvider) -> AsyncIterator[GatedClient]:
    retry = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01, deadline=30)
    gated = GatedClient(api_key=KEY, base_url=fake.base_url, retry=retry, trust_env=False)
    async with gated:
        yield gated


@pytest.fixture
def memory(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memories")


class GateTool(Tool):
    """Waits until the test opens the gate (a tool call the test controls)."""

    name = "gate"
    description = "Wait for the gate (test tool)."
    kind = ToolKind.OTHER

    def __init__(self) -> None:
        self.entered = trio.Event()
        self.open = trio.Event()

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        self.entered.set()
        await self.open.wait()
        return ToolOutcome.ok("the gate opened")


@pytest.fixture
def gate() -> GateTool:
    return GateTool()


@pytest.fixture
def registry(gate: GateTool) -> ToolRegistry:
    registry = default_registry()
    registry.register(MemoryTool())
    registry.register(gate)
    return registry


@pytest.fixture
def deps(deps: SessionDeps, memory: MemoryStore) -> SessionDeps:
    return attrs.evolve(deps, memory=memory)


@pytest.fixture
def open_compacting(open_session: SessionFactory) -> SessionFactory:
    async def start(session_id: str | None = None, **overrides: Any) -> SessionHandle:
        settings = {
            "compression": SETTINGS,
            "context_window": WINDOW,
            "max_tokens": MAX_TOKENS,
            "load_context_files": False,
            **overrides,
        }
        return await open_session(session_id=session_id, **settings)

    return start


def aux_requests(fake: FakeProvider) -> list[RequestRecord]:
    return [r for r in fake.message_requests if r.body["model"] == AUX]


def main_requests(fake: FakeProvider) -> list[RequestRecord]:
    return [r for r in fake.message_requests if r.body["model"] == MODEL]


def wire_text(record: RequestRecord) -> str:
    """Every text of a request's messages, joined."""
    return "\n".join(t for m in record.body["messages"] for t in body_texts(m))


def events_of(seen: list[SessionEvent], kind: str) -> list[Any]:
    return [e.payload for e in seen if e.type == kind]


async def collect_until(
    sub: Subscriber, kind: str, where: Callable[[Any], bool] | None = None
) -> tuple[Any, list[SessionEvent]]:
    seen: list[SessionEvent] = []
    event = await next_event(sub, kind, where, seen=seen)
    return event.payload, seen


async def long_turns(
    session: SessionHandle, fake: FakeProvider, count: int, first: int = 1
) -> None:
    """``count`` completed turns, each answered with ~300 tokens of filler."""
    for n in range(first, first + count):
        fake.enqueue(small(f"answer {n}: {FILLER}"))
        result = await session.run(f"question {n}")
        assert result.reason is TurnEnd.COMPLETED, result


# -- 1. the threshold -------------------------------------------------------------------


async def test_threshold_compacts_before_the_next_request(
    open_compacting: SessionFactory,
    fake: FakeProvider,
    store: StoreClient,
    memory: MemoryStore,
) -> None:
    fake.when(Reply.of(SUMMARY), model=AUX)
    session = await open_compacting()
    with trio.fail_after(15), session.subscribe() as sub:
        fake.enqueue(small(f"answer 1: {FILLER}"))
        await session.run("question 1")
        fake.enqueue(small(f"answer 2: {FILLER}"))
        await session.run("question 2")
        memory.add("memory", "The user's favourite colour is teal.")  # mid-session
        fake.enqueue(small(f"answer 3: {FILLER}"))
        await session.run("question 3 about zanzibar")
        fake.enqueue(big(f"answer 4: {FILLER}"))
        await session.run("question 4")
        before = await store.load(session.id)
        requests_before = len(main_requests(fake))
        fake.enqueue(small("answer 5"))
        result = await session.run("question 5")
        _, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 5)
        after = await store.load(session.id)

    assert result.reason is TurnEnd.COMPLETED
    # Exactly one summary call, between turn 4's reply and turn 5's request.
    mains = main_requests(fake)
    assert len(mains) == requests_before + 1 == 5
    assert len(aux_requests(fake)) == 1
    aux = aux_requests(fake)[0]
    assert mains[3].seq < aux.seq < mains[4].seq
    assert "zanzibar" in wire_text(aux)  # the middle went to the summariser
    # The request after the compaction is shorter and carries the summary.
    assert len(mains[4].body["messages"]) < len(before.messages) + 1
    assert SUMMARY_MARKER in wire_text(mains[4])
    assert "AUX-SUMMARY-FACT" in wire_text(mains[4])
    assert "zanzibar" not in wire_text(mains[4])
    # The system prompt is frozen until the compaction, rebuilt by it.
    assert all("teal" not in system_text(r.body) for r in mains[:4])
    assert "teal" in system_text(mains[4].body)

    started = events_of(seen, "CompactionStarted")
    completed = events_of(seen, "CompactionCompleted")
    assert [(s.turn, s.trigger) for s in started] == [(5, "threshold")]
    assert started[0].tokens >= THRESHOLD
    assert len(completed) == 1
    done = completed[0]
    assert done.method == "model" and done.trigger == "threshold"
    assert done.tokens_before > done.tokens_after
    assert done.messages_before == len(before.messages) + 1  # turn 5's prompt included
    assert done.messages_after < done.messages_before
    (usage,) = events_of(seen, "ContextUsage")  # after the compaction: an estimate
    assert (usage.window, usage.threshold) == (WINDOW, THRESHOLD)
    assert usage.estimated and usage.tokens == done.tokens_after
    replies = events_of(seen, "UsageUpdated")  # each reply: the real figure
    assert replies and all(r.context_tokens > 0 for r in replies)
    real = replies[-1]
    assert real.context_percent == round(100.0 * real.context_tokens / WINDOW, 1)

    # The store: one compaction, the originals untouched in the archive, search finds them.
    compactions = await store.list_compactions(session.id)
    assert len(compactions) == 1
    record = compactions[0]
    assert record.archive_id == done.archive_id
    assert record.method == "model"
    assert (record.messages_before, record.messages_after) == (
        done.messages_before,
        done.messages_after,
    )
    archive = await store.load(record.archive_id)
    assert archive.messages[: len(before.messages)] == before.messages
    assert archive.session.archive_of == session.id
    hits = await store.search("zanzibar")
    assert hits and all(h.archive_id == record.archive_id for h in hits)
    assert {h.session_id for h in hits} == {session.id}
    # The live transcript: valid, compacted, and the turn's answer follows the summary.
    assert_valid(after)
    assert len(after.messages) == done.messages_after + 1
    assert any(SUMMARY_MARKER in m.text() for m in after.messages)
    assert after.messages[-1].text() == "answer 5"


async def four_turns_then_big(session: SessionHandle, fake: FakeProvider) -> None:
    """Turns 1-4 (the 4th reports a prompt over the threshold): turn 5 will compact."""
    await long_turns(session, fake, 3)
    fake.enqueue(big(f"answer 4: {FILLER}"))
    assert (await session.run("question 4")).reason is TurnEnd.COMPLETED


# -- 2. a failed summary: static, then a cooldown ----------------------------------------


@pytest.mark.parametrize(
    ("failure", "timeout", "calls", "why"),
    [
        (ErrorReply(500, "the aux model is down"), 5.0, 3, "the summary call failed"),
        (Reply.of("Sure! The conversation was about questions."), 5.0, 1, "too short"),
        (Reply.of(FILLER * 2), 5.0, 1, "requested sections"),
        (Hang(), 0.3, 1, "longer than 0.3 s"),
    ],
    ids=["error-500", "too-short", "no-headings", "hang"],
)
async def test_a_failed_summary_falls_back_to_static_and_cools_down(
    open_compacting: SessionFactory,
    fake: FakeProvider,
    store: StoreClient,
    failure: Any,
    timeout: float,
    calls: int,
    why: str,
) -> None:
    fake.when(failure, model=AUX)
    settings = attrs.evolve(SETTINGS, summary_timeout=timeout)
    session = await open_compacting(compression=settings)
    with trio.fail_after(20), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        fake.enqueue(small(f"answer 5: {FILLER}"))
        assert (await session.run("question 5 about zanzibar")).reason is TurnEnd.COMPLETED
        first, _ = await collect_until(sub, "CompactionCompleted")
        assert len(aux_requests(fake)) == calls
        # Grow again past the threshold: the next compaction is within the 60 s cooldown.
        fake.enqueue(big(f"answer 6: {FILLER}"))
        assert (await session.run("question 6")).reason is TurnEnd.COMPLETED
        fake.enqueue(small("answer 7"))
        result = await session.run("question 7")
        second, _ = await collect_until(sub, "CompactionCompleted")
        transcript = await store.load(session.id)

    assert result.reason is TurnEnd.COMPLETED
    assert first.method == "static" and why in first.detail, first.detail
    assert second.method == "static" and "cooling down" in second.detail, second.detail
    assert len(aux_requests(fake)) == calls  # no summary call during the cooldown
    if isinstance(failure, Hang):  # the compressor gave up: its request was closed
        with trio.fail_after(2):
            assert await aux_requests(fake)[0].wait_ended() is Outcome.CLIENT_CLOSED
    compactions = await store.list_compactions(session.id)
    assert [c.method for c in compactions] == ["static", "static"]
    assert_valid(transcript)
    summaries = [m.text() for m in transcript.messages if SUMMARY_MARKER in m.text()]
    assert len(summaries) == 1 and "(static summary)" in summaries[0]
    assert "zanzibar" in summaries[0]  # the static summary names the last request it replaced


# -- 3. a compaction cancelled before its commit -----------------------------------------


async def test_cancel_during_the_summary_call_leaves_the_transcript_as_it_was(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    fake.when(Hang(), model=AUX, times=1)
    session = await open_compacting(compression=attrs.evolve(SETTINGS, summary_timeout=60.0))
    with trio.fail_after(15), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        before = await store.load(session.id)
        count = len(fake.requests)
        await session.prompt("question 5")
        started, _ = await collect_until(sub, "CompactionStarted")
        aux = await fake.wait_for_requests(count + 1)  # the summary call, hanging
        asked = time.monotonic()
        cancelled = await session.cancel("stop compacting")
        took = time.monotonic() - asked
        done, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 5)
        with trio.fail_after(2):
            await aux.wait_disconnect()
        after = await store.load(session.id)
        state = await session.state()
        # The session carries on: the next turn compacts (with a good summary this time).
        fake.when(Reply.of(SUMMARY), model=AUX)
        fake.enqueue(small("answer 6"))
        result = await session.run("question 6")
        completed = await collect_until(sub, "CompactionCompleted")

    assert started.trigger == "threshold" and started.turn == 5
    assert aux.body["model"] == AUX
    assert took < 2.0
    assert cancelled.result is not None and cancelled.result.reason is TurnEnd.CANCELLED
    assert done.reason == TurnEnd.CANCELLED.value
    assert events_of(seen, "CompactionCompleted") == []
    assert [s.reason for s in events_of(seen, "CompactionSkipped")] == ["stopped before the commit"]
    assert not state.busy
    # Nothing was committed: the rows are the old ones plus turn 5's prompt.
    assert after.messages[: len(before.messages)] == before.messages
    assert len(after.messages) == len(before.messages) + 1
    assert after.messages[-1].text() == "question 5"
    assert not any(SUMMARY_MARKER in m.text() for m in after.messages)
    assert after.open_tool_uses == ()
    assert_valid(after)
    assert result.reason is TurnEnd.COMPLETED
    assert completed[0].method == "model"
    assert len(await store.list_compactions(session.id)) == 1


async def test_cancel_during_an_idle_compress_leaves_the_transcript_as_it_was(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    fake.when(Hang(), model=AUX)
    session = await open_compacting(compression=attrs.evolve(SETTINGS, summary_timeout=60.0))
    with trio.fail_after(15), session.subscribe() as sub:
        await long_turns(session, fake, 5)
        before = await store.load(session.id)
        count = len(fake.requests)
        accepted = await session.compress("anything")
        await next_event(sub, "CompactionStarted")
        aux = await fake.wait_for_requests(count + 1)
        asked = time.monotonic()
        cancelled = await session.cancel()
        took = time.monotonic() - asked
        with trio.fail_after(2):
            await aux.wait_disconnect()
        after = await store.load(session.id)
        state = await session.state()

    assert accepted.how == "compacting"
    assert took < 2.0
    assert cancelled.result is not None and cancelled.result.reason is TurnEnd.CANCELLED
    assert not state.busy
    assert after.messages == before.messages
    assert await store.list_compactions(session.id) == []


# -- 4. context overflow ------------------------------------------------------------------

OVERFLOW = ErrorReply(
    400, "prompt is too long: 250000 tokens > 200000 maximum", error_type="invalid_request_error"
)


async def test_context_overflow_compacts_and_retries_the_same_request(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    fake.when(Reply.of(SUMMARY), model=AUX)
    session = await open_compacting()
    with trio.fail_after(15), session.subscribe() as sub:
        await long_turns(session, fake, 4)  # small usage: under the threshold
        fake.enqueue(OVERFLOW, small("answer 5"))
        result = await session.run("question 5")
        _, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 5)
        transcript = await store.load(session.id)

    assert result.reason is TurnEnd.COMPLETED and result.text == "answer 5"
    started = events_of(seen, "CompactionStarted")
    completed = events_of(seen, "CompactionCompleted")
    assert [s.trigger for s in started] == ["overflow"]
    assert [(c.trigger, c.method) for c in completed] == [("overflow", "model")]
    mains = main_requests(fake)
    failed, retried = mains[-2], mains[-1]
    assert failed.status == 400 and retried.status == 200
    assert failed.seq < aux_requests(fake)[0].seq < retried.seq
    assert len(retried.body["messages"]) < len(failed.body["messages"])
    assert SUMMARY_MARKER in wire_text(retried) and SUMMARY_MARKER not in wire_text(failed)
    assert body_texts(retried.body["messages"][-1])[-1] == "question 5"  # the same request
    assert_valid(transcript)
    assert transcript.messages[-1].text() == "answer 5"
    assert len(await store.list_compactions(session.id)) == 1


async def test_a_second_overflow_after_the_attempts_are_spent_fails_the_turn(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    fake.when(Reply.of(SUMMARY), model=AUX)
    session = await open_compacting(compression=attrs.evolve(SETTINGS, max_attempts_per_turn=1))
    with trio.fail_after(15), session.subscribe() as sub:
        await long_turns(session, fake, 4)
        fake.enqueue(OVERFLOW, OVERFLOW)
        result = await session.run("question 5")
        _, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 5)
        transcript = await store.load(session.id)

    assert result.reason is TurnEnd.FAILED
    assert "prompt is too long" in result.detail
    assert [c.trigger for c in events_of(seen, "CompactionCompleted")] == ["overflow"]
    skipped = events_of(seen, "CompactionSkipped")
    assert len(skipped) == 1 and "at most 1" in skipped[0].reason
    assert len(aux_requests(fake)) == 1
    assert len(await store.list_compactions(session.id)) == 1
    assert_valid(transcript)


# -- 5. /compress -------------------------------------------------------------------------


async def test_compress_when_idle_with_a_focus(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    cost = Usage(
        input_tokens=777,
        output_tokens=333,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
    )
    fake.when(Reply.of(SUMMARY, usage=cost), model=AUX)
    session = await open_compacting()
    with trio.fail_after(15), session.subscribe() as sub:
        await long_turns(session, fake, 5)  # under the threshold: nothing automatic
        before = await store.load(session.id)
        accepted = await session.compress("the database schema")
        done, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 6)
        after = await store.load(session.id)
        fake.enqueue(small("answer 7"))
        result = await session.run("question 7")

    assert accepted.how == "compacting" and accepted.turn == 6
    assert done.reason == TurnEnd.COMPLETED.value
    assert "compacted 10 messages" in done.detail
    completed = events_of(seen, "CompactionCompleted")
    assert [(c.trigger, c.method) for c in completed] == [("request", "model")]
    (aux,) = aux_requests(fake)
    assert "The user asked to focus on: the database schema" in wire_text(aux)
    (record,) = await store.list_compactions(session.id)
    assert record.focus == "the database schema" and record.method == "model"
    assert (await store.load(record.archive_id)).messages == before.messages
    # The summary call is charged to the session, with the commit.
    spent = after.session.usage
    assert (spent.input_tokens - before.session.usage.input_tokens) == 777
    assert (spent.output_tokens - before.session.usage.output_tokens) == 333
    assert_valid(after)
    assert len(after.messages) < len(before.messages)
    assert not any("answer 2" in m.text() for m in after.messages)  # in the middle
    mains = main_requests(fake)
    assert len(mains) == 6  # five turns and turn 7: the compaction job asked the main model nothing
    assert mains[4].seq < aux.seq < mains[5].seq
    assert result.reason is TurnEnd.COMPLETED
    assert SUMMARY_MARKER in wire_text(mains[5])


async def test_compress_with_nothing_to_compact_is_skipped(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_compacting()
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(small("hello"))
        await session.run("hi")
        accepted = await session.compress()
        done, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 2)
        transcript = await store.load(session.id)

    assert accepted.how == "compacting"
    skipped = events_of(seen, "CompactionSkipped")
    assert len(skipped) == 1 and skipped[0].trigger == "request"
    assert "nothing to compact" in skipped[0].reason
    assert events_of(seen, "CompactionStarted") == []
    assert done.reason == TurnEnd.COMPLETED.value and done.detail == "nothing was compacted"
    assert aux_requests(fake) == []
    assert await store.list_compactions(session.id) == []
    assert [m.text() for m in transcript.messages] == ["hi", "hello"]


async def test_compress_while_a_turn_runs_applies_before_its_next_request(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient, gate: GateTool
) -> None:
    fake.when(Reply.of(SUMMARY), model=AUX)
    session = await open_compacting()
    with trio.fail_after(15), session.subscribe() as sub:
        await long_turns(session, fake, 4)
        fake.enqueue(Reply.of("Waiting.", ToolUse("gate", {}, id="toolu_gate")), small("answer 5"))
        await session.prompt("question 5")
        await gate.entered.wait()
        accepted = await session.compress("gates")
        gate.open.set()
        done, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 5)
        transcript = await store.load(session.id)

    assert accepted.how == "compress_requested" and accepted.turn == 5
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "answer 5"
    completed = events_of(seen, "CompactionCompleted")
    assert [(c.turn, c.trigger, c.method) for c in completed] == [(5, "request", "model")]
    mains = main_requests(fake)
    (aux,) = aux_requests(fake)
    assert mains[-2].seq < aux.seq < mains[-1].seq  # between the turn's two requests
    assert "focus on: gates" in wire_text(aux)
    assert SUMMARY_MARKER in wire_text(mains[-1]) and SUMMARY_MARKER not in wire_text(mains[-2])
    (record,) = await store.list_compactions(session.id)
    assert record.focus == "gates"
    assert_valid(transcript)
    assert transcript.messages[-1].text() == "answer 5"


# -- 6. a new prompt during a compaction ----------------------------------------------------


async def test_a_new_prompt_does_not_interrupt_a_compaction(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient, client: GatedClient
) -> None:
    fake.when(Reply.of(SUMMARY), model=AUX)
    session = await open_compacting()
    with trio.fail_after(15), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        fake.enqueue(small("answer 5"), small("answer 6"))
        gate = client.hold_summaries()
        await session.prompt("question 5", mode="interrupt")
        assert client.held is not None
        await client.held.wait()  # compacting: the summary call is held
        accepted = await session.prompt("question 6", mode="interrupt")
        gate.set()
        fifth, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 5)
        sixth = await turn_completed(sub, 6)
        transcript = await store.load(session.id)

    assert accepted.how == "queued" and accepted.turn is None
    assert fifth.reason == TurnEnd.COMPLETED.value and fifth.text == "answer 5"
    assert [c.method for c in events_of(seen, "CompactionCompleted")] == ["model"]
    assert sixth.reason == TurnEnd.COMPLETED.value and sixth.text == "answer 6"
    assert [m.text() for m in transcript.messages[-4:]] == [
        "question 5",
        "answer 5",
        "question 6",
        "answer 6",
    ]
    assert_valid(transcript)


# -- 7. resume after a compaction ----------------------------------------------------------


async def test_resume_after_a_compaction_loads_the_compacted_transcript(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    fake.when(Reply.of(SUMMARY), model=AUX)
    session = await open_compacting()
    with trio.fail_after(15):
        await four_turns_then_big(session, fake)
        fake.enqueue(small("answer 5"))
        await session.run("question 5")
        compacted = await store.load(session.id)
        await session.target.stop()  # type: ignore[attr-defined]
        resumed = await open_compacting(session_id=session.id)
        state = await resumed.state()
        fake.enqueue(small("answer 6"))
        result = await resumed.run("question 6")
        after = await store.load(session.id)

    assert len(await store.list_compactions(session.id)) == 1
    assert state.messages == len(compacted.messages)
    assert state.context_tokens < THRESHOLD  # estimated from the compacted rows
    assert result.reason is TurnEnd.COMPLETED
    request = main_requests(fake)[-1]
    assert len(request.body["messages"]) == len(compacted.messages) + 1
    assert SUMMARY_MARKER in wire_text(request)
    assert len(aux_requests(fake)) == 1  # no second compaction
    assert after.messages[: len(compacted.messages)] == compacted.messages
    assert_valid(after)


# -- the commit fails or does not answer ----------------------------------------------------


class BrokenCompactStore(StoreClient):
    """A real store whose ``compact`` fails (``mode="error"``) or never answers ("hang")."""

    mode = "error"

    async def compact(self, *args: Any, **kwargs: Any) -> Any:
        if self.mode == "hang":
            await trio.sleep_forever()
        raise StoreError("compact", "the disk is full")


@pytest.mark.parametrize("mode", ["error", "hang"])
async def test_a_failed_commit_leaves_the_transcript_whole_and_the_turn_goes_on(
    system: ActorSystem,
    config: SessionConfig,
    deps: SessionDeps,
    store: StoreClient,
    fake: FakeProvider,
    mode: str,
) -> None:
    fake.when(Reply.of(SUMMARY), model=AUX)
    broken = BrokenCompactStore(store.target, timeout=store.timeout)
    broken.mode = mode
    session_config = attrs.evolve(
        config,
        compression=SETTINGS,
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
        load_context_files=False,
        store_timeout=0.3,
    )
    session = await start_session(system, session_config, attrs.evolve(deps, store=broken))
    with trio.fail_after(15), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        before = await store.load(session.id)
        fake.enqueue(small("answer 5"))
        result = await session.run("question 5")
        _, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 5)
        after = await store.load(session.id)

    assert result.reason is TurnEnd.COMPLETED, result
    assert result.text == "answer 5"
    assert events_of(seen, "CompactionCompleted") == []
    (skipped,) = events_of(seen, "CompactionSkipped")
    assert skipped.trigger == "threshold"
    assert ("the disk is full" if mode == "error" else "did not answer") in skipped.reason
    assert await store.list_compactions(session.id) == []
    assert after.messages[: len(before.messages)] == before.messages
    assert [m.text() for m in after.messages[len(before.messages) :]] == [
        "question 5",
        "answer 5",
    ]
    assert_valid(after)


# -- control verbs during a compaction ----------------------------------------------------


async def test_an_interrupt_during_a_compaction_ends_the_turn_after_the_commit(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient, client: GatedClient
) -> None:
    fake.when(Reply.of(SUMMARY), model=AUX)
    session = await open_compacting()
    with trio.fail_after(15), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        requests = len(main_requests(fake))
        gate = client.hold_summaries()
        await session.prompt("question 5")
        assert client.held is not None
        await client.held.wait()
        accepted = await session.interrupt("stop after compacting")
        gate.set()
        done, seen = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 5)
        transcript = await store.load(session.id)

    assert accepted.how == "interrupting"
    assert [c.method for c in events_of(seen, "CompactionCompleted")] == ["model"]
    assert done.reason == TurnEnd.INTERRUPTED.value
    assert len(main_requests(fake)) == requests  # no model call after the interrupt
    assert len(await store.list_compactions(session.id)) == 1
    assert transcript.messages[-1].text().endswith("question 5")
    assert_valid(transcript)


async def test_a_steer_during_a_compaction_reaches_the_next_request(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient, client: GatedClient
) -> None:
    fake.when(Reply.of(SUMMARY), model=AUX)
    session = await open_compacting()
    with trio.fail_after(15), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        fake.enqueue(small("answer 5"))
        gate = client.hold_summaries()
        await session.prompt("question 5")
        assert client.held is not None
        await client.held.wait()
        accepted = await session.steer("also mention the weather")
        gate.set()
        done = await turn_completed(sub, 5)

    assert accepted.how == "steered"
    assert done.reason == TurnEnd.COMPLETED.value
    request = main_requests(fake)[-1]
    assert SUMMARY_MARKER in wire_text(request)
    assert "also mention the weather" in wire_text(request)
    assert len(main_requests(fake)) == 5  # one request for the turn, steer included
