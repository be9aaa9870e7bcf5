"""Compaction that goes wrong: failed summaries, cancels before the commit, failed commits,
control verbs during a compaction."""

from __future__ import annotations

import time
from typing import Any

import attrs
import pytest
import trio

from actors import ActorSystem
from hermes.compression import SUMMARY_MARKER
from hermes.fake import (
    ErrorReply,
    FakeProvider,
    Hang,
    Outcome,
    Reply,
)
from hermes.session import (
    SessionConfig,
    SessionDeps,
    TurnEnd,
    start_session,
)
from hermes.store import StoreClient, StoreError

from ..conftest import SessionFactory
from ..control_helpers import next_event, turn_completed
from ..helpers import assert_valid
from .conftest import (
    AUX,
    FILLER,
    MAX_TOKENS,
    SETTINGS,
    SUMMARY,
    WINDOW,
    GatedClient,
    aux_requests,
    big,
    collect_until,
    events_of,
    four_turns_then_big,
    is_summary,
    long_turns,
    main_requests,
    small,
    wire_text,
)

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
    fake.when(failure, predicate=is_summary)  # the aux model's and the main model's retry
    settings = attrs.evolve(SETTINGS, summary_timeout=timeout)
    session = await open_compacting(compression=settings)
    with trio.fail_after(20), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        fake.enqueue(small(f"answer 5: {FILLER}"))
        assert (await session.run("question 5 about zanzibar")).reason is TurnEnd.COMPLETED
        first, _ = await collect_until(sub, "CompactionCompleted")
        assert len(aux_requests(fake)) == calls
        main_summaries = [r for r in main_requests(fake) if is_summary(r)]
        assert len(main_summaries) == calls  # retried once on the main model, then static
        # Grow again past the threshold: the next compaction is within the 60 s cooldown.
        fake.enqueue(big(f"answer 6: {FILLER}"))
        assert (await session.run("question 6")).reason is TurnEnd.COMPLETED
        fake.enqueue(small("answer 7"))
        result = await session.run("question 7")
        second, _ = await collect_until(sub, "CompactionCompleted")
        transcript = await store.load(session.id)

    assert result.reason is TurnEnd.COMPLETED
    assert first.method == "static" and why in first.detail, first.detail
    assert f"{AUX} failed" in first.detail, first.detail
    assert second.method == "static" and "cooling down" in second.detail, second.detail
    assert len(aux_requests(fake)) == calls  # no summary call during the cooldown
    assert len([r for r in main_requests(fake) if is_summary(r)]) == calls
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
