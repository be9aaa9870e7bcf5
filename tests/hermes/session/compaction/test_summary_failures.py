"""Compression as the seeds decide it (issue 24, item 2; seeds #192, #196-#198).

- the trigger: 50 % of the window minus the output reservation, at least 75 %
  on a window under 512K;
- a network, closed-stream, access, truncated or empty summary aborts the
  compaction and keeps every message, and holds automatic compaction off for
  the cooldown;
- a failed auxiliary summary is retried once on the main model, which then
  writes the session's summaries;
- a manual ``/compress`` gets past the cooldown.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
import trio

from hermes.compression import CompressionSettings, threshold_tokens
from hermes.fake import ErrorReply, FakeProvider, Hang, Reply, Truncate, Usage
from hermes.session import TurnEnd
from hermes.store import StoreClient

from ..conftest import MODEL, SessionFactory
from ..helpers import assert_valid
from .conftest import (
    AUX,
    FILLER,
    MAX_TOKENS,
    SETTINGS,
    SUMMARY,
    WINDOW,
    aux_requests,
    big,
    collect_until,
    events_of,
    four_turns_then_big,
    is_summary,
    main_requests,
    small,
)


def _main_summaries(fake: FakeProvider) -> int:
    return len([r for r in main_requests(fake) if is_summary(r)])


async def test_the_trigger_is_at_least_75_percent_under_512k(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    settings = attrs.evolve(SETTINGS, small_window=CompressionSettings().small_window)
    threshold = threshold_tokens(WINDOW, MAX_TOKENS, settings)
    assert threshold == 14_250  # 0.75 x (20,000 - 1,000), not 0.5 x
    fake.when(Reply.of(SUMMARY), model=AUX)
    session = await open_compacting(compression=settings)
    with trio.fail_after(20), session.subscribe() as sub:
        await four_turns_then_big(session, fake)  # reports 12,000: over 50 %, under 75 %
        fake.enqueue(big(f"answer 5: {FILLER}", tokens=15_000))
        assert (await session.run("question 5")).reason is TurnEnd.COMPLETED
        assert aux_requests(fake) == []  # 12,000 did not trigger
        fake.enqueue(small("answer 6"))
        assert (await session.run("question 6")).reason is TurnEnd.COMPLETED
        done, _ = await collect_until(sub, "CompactionCompleted")
    assert (done.trigger, done.method) == ("threshold", "model")
    assert len(aux_requests(fake)) == 1


ABORTS = [
    (Hang(close_after=0.05), "network"),
    (Reply.of(SUMMARY, fault=Truncate(after=4)), "closed_stream"),
    (ErrorReply(403, "no access to this model"), "access"),
    (ErrorReply(402, "your credit balance is too low"), "access"),
    (Reply.of(SUMMARY, stop_reason="max_tokens"), "truncated"),
    (Reply.of(""), "empty"),
]


@pytest.mark.parametrize(
    ("failure", "kind"),
    ABORTS,
    ids=["network", "closed-stream", "access", "quota", "truncated", "empty"],
)
async def test_an_aborting_failure_keeps_every_message_and_holds_off(
    open_compacting: SessionFactory,
    fake: FakeProvider,
    store: StoreClient,
    failure: Any,
    kind: str,
) -> None:
    fake.when(failure, predicate=is_summary)  # the aux model and the retry on the main one
    session = await open_compacting()
    with trio.fail_after(30), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        before = await store.load(session.id)
        fake.enqueue(big(f"answer 5: {FILLER}"))
        assert (await session.run("question 5")).reason is TurnEnd.COMPLETED
        skipped, seen = await collect_until(sub, "CompactionSkipped")
        fake.enqueue(small("answer 6"))  # still over the threshold: held, not compacted
        assert (await session.run("question 6")).reason is TurnEnd.COMPLETED
        _, later = await collect_until(sub, "TurnCompleted", lambda p: p.turn == 6)
        transcript = await store.load(session.id)
    assert f"the summary failed ({kind}:" in skipped.reason, skipped.reason
    assert f"{AUX} failed" in skipped.reason
    assert "every message is kept" in skipped.reason
    assert events_of(seen, "CompactionCompleted") == []
    assert events_of(later, "CompactionStarted") == []  # held during the cooldown
    assert await store.list_compactions(session.id) == []
    assert transcript.messages[: len(before.messages)] == before.messages
    assert len(transcript.messages) == len(before.messages) + 4
    assert _main_summaries(fake) >= 1  # the main model was tried once before aborting
    assert_valid(transcript)


async def test_a_failed_aux_summary_is_retried_once_on_the_main_model(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    fake.when(ErrorReply(500, "the aux model is down"), model=AUX)
    fake.when(Reply.of(SUMMARY), model=MODEL, predicate=is_summary)
    session = await open_compacting()
    with trio.fail_after(30), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        fake.enqueue(small(f"answer 5: {FILLER}"))
        assert (await session.run("question 5")).reason is TurnEnd.COMPLETED
        first, _ = await collect_until(sub, "CompactionCompleted")
        aux_calls = len(aux_requests(fake))
        accepted = await session.compress(None)  # the next summary goes to the main model
        assert accepted.how == "compacting"
        second, _ = await collect_until(sub, "CompactionCompleted")
    assert first.method == "model", first.detail
    assert f"{AUX} failed" in first.detail and f"summarised by {MODEL}" in first.detail
    assert _main_summaries(fake) == 2
    assert len(aux_requests(fake)) == aux_calls  # pinned to the main model since
    assert second.method == "model"
    assert [c.method for c in await store.list_compactions(session.id)] == ["model", "model"]


async def test_a_manual_compress_gets_past_the_cooldown(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    settings = attrs.evolve(SETTINGS, aux_model=None)  # the session's model writes summaries
    garbage = fake.when(
        Reply.of("Sure! The conversation was about questions."), times=1, predicate=is_summary
    )
    session = await open_compacting(compression=settings)
    with trio.fail_after(30), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        fake.enqueue(small(f"answer 5: {FILLER}"))
        assert (await session.run("question 5")).reason is TurnEnd.COMPLETED
        first, _ = await collect_until(sub, "CompactionCompleted")
        assert garbage.exhausted
        fake.when(Reply.of(SUMMARY), predicate=is_summary)
        # Over the threshold again within the cooldown: the automatic one is static.
        fake.enqueue(big(f"answer 6: {FILLER}"))
        assert (await session.run("question 6")).reason is TurnEnd.COMPLETED
        fake.enqueue(small("answer 7"))
        assert (await session.run("question 7")).reason is TurnEnd.COMPLETED
        second, _ = await collect_until(sub, "CompactionCompleted")
        calls = _main_summaries(fake)
        await session.compress("the questions")
        third, _ = await collect_until(sub, "CompactionCompleted")
    assert first.method == "static" and "too short" in first.detail
    assert second.method == "static" and "cooling down" in second.detail
    assert calls == 1  # no summary call during the cooldown...
    assert (third.trigger, third.method) == ("request", "model")  # ...but /compress made one
    assert _main_summaries(fake) == 2
    methods = [c.method for c in await store.list_compactions(session.id)]
    assert methods == ["static", "static", "model"]


async def test_an_aborted_compaction_still_charges_its_summary_calls(
    open_compacting: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    cost = Usage(
        input_tokens=777,
        output_tokens=333,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
    )
    fake.when(Reply.of(SUMMARY, stop_reason="max_tokens", usage=cost), predicate=is_summary)
    session = await open_compacting()
    with trio.fail_after(30), session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        before = (await store.load(session.id)).session.usage
        fake.enqueue(small("answer 5"))
        assert (await session.run("question 5")).reason is TurnEnd.COMPLETED
        await collect_until(sub, "CompactionSkipped")
        after = (await store.load(session.id)).session.usage
    # answer 5 (3,000 in, 50 out) and the two cut summaries (aux, then the main model)
    assert after.input_tokens - before.input_tokens == 3_000 + 2 * 777
    assert after.output_tokens - before.output_tokens == 50 + 2 * 333
