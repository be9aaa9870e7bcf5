"""A running review is cancelled by any new input and leaves no partial writes."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import trio

from hermes.fake import (
    FakeProvider,
    Reply,
    RequestRecord,
)
from hermes.memory import MemoryDraft, MemoryStore
from hermes.session import (
    NoTurnRunning,
    SessionClosed,
    SessionHandle,
    Subscriber,
    TurnEnd,
)
from hermes.session.events import SessionEvent
from hermes.session.messages import MachineInput

from ..conftest import SessionFactory
from ..control_helpers import next_event, turn_completed
from .conftest import (
    NOTHING,
    SLOW,
    add,
    is_review,
    record_is_review,
    review_done,
    review_requests,
    script_review,
)


async def _review_streaming(
    session: SessionHandle, fake: FakeProvider, sub: Subscriber
) -> RequestRecord:
    """Run a turn whose review drafts an add, then streams forever; its streaming request."""
    script_review(fake, Reply.of(add("Drafted, never saved.")), SLOW)
    fake.when(NOTHING, predicate=is_review)  # any later review
    fake.enqueue(Reply.of("Done."))
    count = len(fake.requests)
    await session.run("do the thing")
    await next_event(sub, "ReviewStarted")
    record = await fake.wait_for_requests(count + 3)  # the turn, the review's add, its stream
    assert record_is_review(record) and record.body["messages"][-1]["role"] == "user"
    while record.events_sent < 3:  # noqa: ASYNC110 - no event for stream progress
        await trio.sleep(0.005)  # streaming: the draft holds an add
    return record


async def test_a_new_prompt_cancels_a_review_mid_stream_without_writes(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        streaming = await _review_streaming(session, fake, sub)
        fake.enqueue(Reply.of("Next answer."))
        asked = time.monotonic()
        accepted = await session.prompt("next question")
        done = await review_done(sub)
        gone = time.monotonic()
        disconnected = await streaming.wait_disconnect()
        seen: list[SessionEvent] = []
        await next_event(sub, "TurnCompleted", lambda p: p.turn == 2, seen=seen)
        turn = seen[-1].payload
        second = (await next_event(sub, "ReviewCompleted", seen=seen)).payload  # turn 2's own
        state = await session.state()

    assert accepted.how == "started" and accepted.turn == 2
    assert done.outcome == "cancelled" and (done.added, done.staged) == (0, 0)
    assert "new turn" in done.detail or "prompt" in done.detail
    assert gone - asked < 1.0
    assert disconnected - asked < 1.0
    assert turn.reason == TurnEnd.COMPLETED.value and turn.text == "Next answer."
    assert not memory.path("memory").exists() and memory.entries("memory") == []
    assert (second.turn, second.outcome, second.added) == (2, "completed", 0)
    # At most one in flight: turn 1's review ended before turn 2 started, and turn 2's
    # review started after that turn ended.
    order = [(e.type, e.payload.turn) for e in seen if e.type.startswith(("Review", "Turn"))]
    assert order == [
        ("TurnStarted", 2),
        ("TurnCompleted", 2),
        ("ReviewStarted", 2),
        ("ReviewCompleted", 2),
    ]
    assert not state.reviewing
    assert len(review_requests(fake)) == 3


async def _verb(session: SessionHandle, verb: str, fake: FakeProvider) -> None:
    if verb == "prompt":
        fake.enqueue(Reply.of("ok"))
        await session.prompt("again")
    elif verb == "steer":
        fake.enqueue(Reply.of("ok"))
        await session.steer("a steer when idle starts a turn")
    elif verb == "interrupt":
        with pytest.raises(NoTurnRunning):
            await session.interrupt()
    elif verb == "cancel":
        cancelled = await session.cancel()
        assert cancelled.result is None
    elif verb == "compress":
        await session.compress()
    elif verb == "close":
        await session.close()
    elif verb == "machine":
        fake.enqueue(Reply.of("ok"))
        await session.target.cast(MachineInput("process", "a process finished"))  # type: ignore[attr-defined]
    else:
        raise AssertionError(verb)


@pytest.mark.parametrize(
    "verb", ["prompt", "steer", "interrupt", "cancel", "compress", "close", "machine"]
)
async def test_every_verb_and_input_cancels_a_running_review(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore, verb: str
) -> None:
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        streaming = await _review_streaming(session, fake, sub)
        await _verb(session, verb, fake)
        done = await review_done(sub)
        await streaming.wait_disconnect()
        if verb in ("prompt", "steer", "machine"):
            assert (await turn_completed(sub, 2)).reason == TurnEnd.COMPLETED.value
        if verb in ("prompt", "steer"):  # a person's turn: reviewed in its turn
            assert (await review_done(sub, 2)).outcome == "completed"

    assert done.outcome == "cancelled" and done.turn == 1
    assert memory.entries("memory") == []
    if verb == "close":
        with pytest.raises(SessionClosed):
            await session.state()
    else:
        assert not (await session.state()).reviewing
    # Machine input and the control verbs start no review of their own.
    assert len(review_requests(fake)) == (3 if verb in ("prompt", "steer") else 2)


async def test_a_review_cancelled_inside_its_memory_tool_call_writes_nothing(
    open_reviewing: SessionFactory,
    fake: FakeProvider,
    memory: MemoryStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fault injection: the draft's add (run in a worker thread by the tool) waits for us,
    # so the new prompt arrives while the review is inside the tool call.
    inside, release = threading.Event(), threading.Event()
    original = MemoryDraft.add

    def held_add(self: MemoryDraft, kind: Any, text: str) -> Any:
        inside.set()
        release.wait(5)
        return original(self, kind, text)

    monkeypatch.setattr(MemoryDraft, "add", held_add)
    script_review(fake, Reply.of(add("written half-way")), NOTHING)
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("one"), Reply.of("two"))
        await session.run("first")
        await trio.to_thread.run_sync(inside.wait, 5)
        async with trio.open_nursery() as nursery:

            async def let_go() -> None:
                await trio.sleep(0.05)  # the kill is waiting on the tool call by now
                release.set()

            nursery.start_soon(let_go)
            result = await session.run("second")
        done = await review_done(sub)

    assert result.reason is TurnEnd.COMPLETED and result.text == "two"
    assert done.outcome == "cancelled" and (done.added, done.staged) == (0, 0)
    assert memory.entries("memory") == [] and memory.proposals() == []
    assert not memory.path("memory").exists()  # not even an empty file was written
