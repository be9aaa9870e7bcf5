"""Steer and redirect: delivered at role-safe seams, handed back if late, never lost."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import trio

from hermes.fake import Endless, FakeProvider, Hang, Reply, Text, ToolUse
from hermes.session import NoTurnRunning, QueueFull, SessionHandle, TurnEnd
from hermes.store import StoreClient

from .control_helpers import (
    gated,
    next_event,
    request_messages,
    results,
    strict_fake,
    text_deltas,
    texts,
    turn_completed,
    wire_blocks,
    wire_texts,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeProvider]:
    async with strict_fake() as provider:
        yield provider


SLOW_TEXT = Text(deltas=tuple(f"part{i} " for i in range(40)))


def steer_marked(text: str) -> str:
    return f"[Steer from the user, delivered mid-turn: {text}]"


# -- steer -------------------------------------------------------------------------------


async def test_steer_during_tools_lands_after_the_newest_tool_result(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": gated("go", "echo tool-done")}, id="toolu_1")),
        Reply.of("finished with the steer in mind"),
    )
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("run the tool")
        await next_event(sub, "ToolStarted")
        accepted = await session.steer("also check the logs")
        (workdir / "go").touch()
        delivered = await next_event(sub, "SteerDelivered")
        done = await turn_completed(sub, 1)

    assert accepted.how == "steered" and accepted.turn == 1
    assert done.reason == TurnEnd.COMPLETED.value
    assert delivered.payload.text == "also check the logs"
    # The next request carries the steer after the tool result, in the same user message.
    assert len(fake.message_requests) == 2
    last = request_messages(fake.message_requests[1])[-1]
    assert last["role"] == "user"
    assert [b["type"] for b in wire_blocks(last)] == ["tool_result", "text"]
    assert wire_texts(last) == [steer_marked("also check the logs")]
    # ... and the store has it at the seq the event named.
    messages = (await store.load(session.id)).messages
    stored = messages[delivered.payload.seq]
    assert stored.role == "user"
    assert [r.tool_use_id for r in results(stored)] == ["toolu_1"]
    assert texts(stored) == [steer_marked("also check the logs")]
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]


async def test_steer_during_a_tool_using_reply_joins_that_batch(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(
        Reply.of(SLOW_TEXT, ToolUse("terminal", {"command": "echo hi"}), event_delay=0.005),
        Reply.of("done"),
    )
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("go")
        await text_deltas(sub, 1)
        await session.steer("prefer short answers")
        done = await turn_completed(sub, 1)

    assert done.reason == TurnEnd.COMPLETED.value
    second = request_messages(fake.message_requests[1])
    assert wire_texts(second[-1]) == [steer_marked("prefer short answers")]
    assert sum(steer_marked("prefer short answers") in wire_texts(m) for m in second) == 1


async def test_a_steer_the_turn_could_not_take_runs_as_the_next_turn(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Reply.of(SLOW_TEXT, event_delay=0.005), Reply.of("handled the steer"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("answer without tools")
        await text_deltas(sub, 1)
        await session.steer("and mention the weather")
        first = await turn_completed(sub, 1)
        started = await next_event(sub, "TurnStarted")
        second = await turn_completed(sub, 2)

    assert first.reason == TurnEnd.COMPLETED.value
    assert first.text == "".join(SLOW_TEXT.pieces())  # the steer did not cut the reply
    assert started.payload.turn == 2
    assert started.payload.prompt == "and mention the weather"
    assert second.text == "handled the steer"
    assert len(fake.message_requests) == 2
    assert wire_texts(request_messages(fake.message_requests[1])[-1]) == ["and mention the weather"]
    messages = (await store.load(session.id)).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert texts(messages[2]) == ["and mention the weather"]


async def test_steer_while_idle_starts_a_turn(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Reply.of("steered from idle"))
    with trio.fail_after(5), session.subscribe() as sub:
        accepted = await session.steer("hello there")
        done = await turn_completed(sub, 1)
    assert accepted.how == "started" and accepted.turn == 1
    assert done.text == "steered from idle"
    assert wire_texts(request_messages(fake.message_requests[0])[-1]) == ["hello there"]


async def test_several_steers_are_all_delivered_in_order(
    session: SessionHandle, fake: FakeProvider, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": gated("go")})),
        Reply.of("ok"),
    )
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("go")
        await next_event(sub, "ToolStarted")
        for word in ("one", "two", "three"):
            await session.steer(word)
        (workdir / "go").touch()
        await turn_completed(sub, 1)
    last = request_messages(fake.message_requests[1])[-1]
    assert wire_texts(last) == [steer_marked(w) for w in ("one", "two", "three")]


# -- redirect ----------------------------------------------------------------------------


async def test_redirect_during_the_stream_reissues_the_request(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Endless(delta="wrong ", event_delay=0.005), Reply.of("the corrected answer"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("explain it in French")
        await text_deltas(sub, 2)
        accepted = await session.redirect("no, in English")
        delivered = await next_event(sub, "SteerDelivered")
        done = await turn_completed(sub, 1)
        with trio.fail_after(1):
            await fake.message_requests[0].wait_disconnect()

    assert accepted.how == "redirected" and accepted.turn == 1
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "the corrected answer"
    assert delivered.payload.text == "no, in English"
    assert len(fake.message_requests) == 2
    reissued = request_messages(fake.message_requests[1])
    assert [m["role"] for m in reissued] == ["user", "assistant", "user"]
    partial = wire_texts(reissued[1])[0]  # the visible text, unmarked (seed #154)
    assert partial.startswith("wrong wrong") and "[redirected]" not in partial
    assert wire_texts(reissued[2])[0].endswith("\n\nno, in English")
    messages = (await store.load(session.id)).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert texts(messages[1]) == [partial]
    assert "no, in English" in texts(messages[delivered.payload.seq])[0]
    assert texts(messages[3]) == ["the corrected answer"]


async def test_redirect_during_tools_acts_as_a_steer(
    session: SessionHandle, fake: FakeProvider, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": gated("go")}, id="toolu_r")),
        Reply.of("ok"),
    )
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("go")
        await next_event(sub, "ToolStarted")
        accepted = await session.redirect("use the other directory")
        (workdir / "go").touch()
        done = await turn_completed(sub, 1)

    assert accepted.how == "steered"
    assert done.reason == TurnEnd.COMPLETED.value
    assert len(fake.message_requests) == 2  # nothing was reissued
    last = request_messages(fake.message_requests[1])[-1]
    assert [b["type"] for b in wire_blocks(last)] == ["tool_result", "text"]
    assert wire_texts(last) == [steer_marked("use the other directory")]


async def test_redirect_when_idle_is_refused(session: SessionHandle) -> None:
    with trio.fail_after(5), pytest.raises(NoTurnRunning):
        await session.redirect("anything")


async def test_a_steer_pending_at_an_interrupt_is_not_lost(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Endless(event_delay=0.005), Reply.of("took the steer"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("go")
        await text_deltas(sub, 1)
        await session.steer("remember the tests")
        await session.interrupt()
        first = await turn_completed(sub, 1)
        started = await next_event(sub, "TurnStarted")
        second = await turn_completed(sub, 2)
    assert first.reason == TurnEnd.INTERRUPTED.value
    assert started.payload.prompt == "remember the tests"
    assert second.text == "took the steer"
    messages = (await store.load(session.id)).messages
    assert sum("remember the tests" in str(m.content) for m in messages) == 1


async def test_redirect_before_any_text_keeps_a_placeholder(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Hang(), Reply.of("better"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("question")
        await fake.wait_for_requests(1)
        accepted = await session.redirect("a better question")
        done = await turn_completed(sub, 1)
        with trio.fail_after(1):
            await fake.message_requests[0].wait_disconnect()
    assert accepted.how == "redirected"
    assert done.text == "better"
    reissued = request_messages(fake.message_requests[1])  # Hermes' shape (seed #154)
    assert [m["role"] for m in reissued] == ["user", "assistant", "user"]
    assert wire_texts(reissued[0]) == ["question"]
    assert wire_texts(reissued[1]) == ["[interrupt: no assistant output for this turn]"]
    assert wire_texts(reissued[2])[0].endswith("\n\na better question")
    messages = (await store.load(session.id)).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]


async def test_steers_beyond_the_capacity_are_refused(
    open_session: Callable[..., Awaitable[SessionHandle]], fake: FakeProvider, workdir: Path
) -> None:
    session = await open_session(steer_capacity=2)
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": gated("go")})), Reply.of("ok"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("go")
        await next_event(sub, "ToolStarted")
        await session.steer("one")
        await session.redirect("two")  # during tools a redirect queues as a steer
        with pytest.raises(QueueFull, match="2 steers"):
            await session.steer("three")
        (workdir / "go").touch()
        await turn_completed(sub, 1)
    last = request_messages(fake.message_requests[1])[-1]
    assert wire_texts(last) == [steer_marked("one"), steer_marked("two")]


async def test_a_steer_pending_at_a_redirect_goes_into_the_reissued_request(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Endless(event_delay=0.005), Reply.of("both seen"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("go")
        await text_deltas(sub, 1)
        await session.steer("keep it short")
        await session.redirect("answer in one word")
        done = await turn_completed(sub, 1)
    assert done.text == "both seen"
    last = request_messages(fake.message_requests[1])[-1]
    correction, steer = wire_texts(last)
    assert correction.startswith("[Context from the interrupted assistant response]\n")
    assert correction.endswith("\n\nanswer in one word")
    assert steer == steer_marked("keep it short")
    messages = (await store.load(session.id)).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
