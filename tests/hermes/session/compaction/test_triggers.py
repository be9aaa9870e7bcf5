"""Compaction triggers through a real session: the threshold, overflow, /compress, resume."""

from __future__ import annotations

import attrs
import trio

from hermes.compression import SUMMARY_MARKER
from hermes.fake import (
    ErrorReply,
    FakeProvider,
    Reply,
    ToolUse,
    Usage,
)
from hermes.memory import MemoryStore
from hermes.session import (
    TurnEnd,
)
from hermes.store import StoreClient

from ..conftest import SessionFactory
from ..control_helpers import turn_completed
from ..helpers import assert_valid, body_texts, system_text
from .conftest import (
    AUX,
    FILLER,
    SETTINGS,
    SUMMARY,
    THRESHOLD,
    WINDOW,
    GatedClient,
    GateTool,
    aux_requests,
    big,
    collect_until,
    events_of,
    four_turns_then_big,
    long_turns,
    main_requests,
    small,
    wire_text,
)

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
