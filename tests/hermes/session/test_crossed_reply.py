"""A reply cut by a redirect or an interrupt: what the transcript and the next request carry
(seed #154; ``hermes/session/crossed.py``), at the default (Hermes) and ``marked``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio

from hermes.fake import Endless, FakeProvider, Hang, Reply, Text
from hermes.session import CrossedReply, SessionConfig, SessionHandle, Subscriber, TurnEnd
from hermes.session.events import SessionEvent
from hermes.store import StoreClient

from .control_helpers import next_event, request_messages, text_deltas, texts, turn_completed

SessionFactory = Callable[..., Awaitable[SessionHandle]]

PLACEHOLDER = "[interrupt: no assistant output for this turn]"
CHECKPOINT = (
    "[Context from the interrupted assistant response]\n"
    "[This response was interrupted by a user correction.]"
)


def seen_by_model(fake: FakeProvider, index: int) -> list[tuple[str, list[str]]]:
    """Request ``index``'s messages as (role, text blocks); every block must be text."""
    shaped = []
    for message in request_messages(fake.message_requests[index]):
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        assert all(b["type"] == "text" for b in blocks), blocks
        shaped.append((message["role"], [b["text"] for b in blocks]))
    return shaped


def corrected(visible: str, text: str) -> str:
    if not visible:
        return f"{CHECKPOINT}\n\n{text}"
    return f"{CHECKPOINT}\n\nVisible response before the interruption:\n\n{visible}\n\n{text}"


async def until_turn_ends(sub: Subscriber, turn: int, seen: list[SessionEvent]) -> Any:
    return (await next_event(sub, "TurnCompleted", lambda p: p.turn == turn, seen=seen)).payload


def of_type(seen: list[SessionEvent], kind: str) -> list[Any]:
    return [e.payload for e in seen if e.type == kind]


# -- the default: Hermes' shapes ------------------------------------------------------


def test_the_default_is_hermes(config: SessionConfig) -> None:
    assert config.crossed_reply is CrossedReply.HERMES
    with pytest.raises(ValueError, match="crossed_reply: expected one of hermes, marked"):
        SessionConfig(model="m", cwd=".", spill_dir=".", crossed_reply="kept")


async def test_a_redirect_mid_stream_keeps_the_visible_text_and_sends_the_checkpoint(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Endless(delta="wrong ", event_delay=0.005), Reply.of("the corrected answer"))
    seen: list[SessionEvent] = []
    with trio.fail_after(10), session.subscribe() as sub:
        await session.prompt("explain it in French")
        await text_deltas(sub, 2)
        accepted = await session.redirect("no, in English")
        done = await until_turn_ends(sub, 1, seen)

    assert accepted.how == "redirected"
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "the corrected answer"
    kept = [m for m in of_type(seen, "MessageCompleted") if m.stop_reason == "redirected"]
    assert len(kept) == 1
    visible = kept[0].text
    assert visible.startswith("wrong wrong") and not visible.endswith(" ")  # stripped
    assert "[redirected]" not in visible
    assert [s.text for s in of_type(seen, "SteerDelivered")] == ["no, in English"]
    assert len(fake.message_requests) == 2
    assert seen_by_model(fake, 1) == [
        ("user", ["explain it in French"]),
        ("assistant", [visible]),
        ("user", [corrected(visible, "no, in English")]),
    ]
    messages = (await store.load(session.id)).messages
    assert [(m.role, texts(m)) for m in messages] == [
        *seen_by_model(fake, 1),
        ("assistant", ["the corrected answer"]),
    ]


async def test_a_redirect_before_any_text_stores_the_hidden_placeholder(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Hang(), Reply.of("better"))
    seen: list[SessionEvent] = []
    with trio.fail_after(10), session.subscribe() as sub:
        await session.prompt("question")
        await fake.wait_for_requests(1)
        await session.redirect("a better question")
        done = await until_turn_ends(sub, 1, seen)

    assert done.text == "better"
    assert seen_by_model(fake, 1) == [
        ("user", ["question"]),
        ("assistant", [PLACEHOLDER]),
        ("user", [corrected("", "a better question")]),
    ]
    # The placeholder is the model's alone: no event shows it to the user.
    shown = [m.text for m in of_type(seen, "MessageCompleted")]
    assert shown == ["better"]
    messages = (await store.load(session.id)).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]


async def test_an_interrupt_mid_stream_keeps_the_visible_text_unmarked(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    slow = Text(deltas=tuple(f"word{i} " for i in range(200)))
    fake.enqueue(Reply.of(slow, event_delay=0.01), Reply.of("continued"))
    seen: list[SessionEvent] = []
    with trio.fail_after(10), session.subscribe() as sub:
        await session.prompt("write a long answer")
        await text_deltas(sub, 3)
        await session.interrupt("enough")
        first = await until_turn_ends(sub, 1, seen)
        await session.prompt("go on")
        await until_turn_ends(sub, 2, seen)

    assert first.reason == TurnEnd.INTERRUPTED.value
    kept = [m for m in of_type(seen, "MessageCompleted") if m.stop_reason == "interrupted"]
    assert len(kept) == 1
    visible = kept[0].text
    assert visible.startswith("word0 word1 word2") and "word199" not in visible
    assert first.text == visible
    assert seen_by_model(fake, 1) == [
        ("user", ["write a long answer"]),
        ("assistant", [visible]),
        ("user", ["go on"]),
    ]
    messages = (await store.load(session.id)).messages
    assert [(m.role, texts(m)) for m in messages][:2] == seen_by_model(fake, 1)[:2]


async def test_an_interrupt_before_any_text_stores_nothing(
    session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(Hang(), Reply.of("answered"))
    seen: list[SessionEvent] = []
    with trio.fail_after(10), session.subscribe() as sub:
        await session.prompt("question")
        await fake.wait_for_requests(1)
        await session.interrupt("stop")
        first = await until_turn_ends(sub, 1, seen)
        await session.prompt("go on")
        await until_turn_ends(sub, 2, seen)

    assert first.reason == TurnEnd.INTERRUPTED.value
    assert seen_by_model(fake, 1) == [("user", ["question", "go on"])]


async def test_the_fourth_redirect_of_a_turn_runs_as_the_next_turn(
    session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(*(Endless(delta=f"v{i} ", event_delay=0.005) for i in range(4)))
    fake.enqueue(Reply.of("done"))
    seen: list[SessionEvent] = []
    with trio.fail_after(15), session.subscribe() as sub:
        await session.prompt("q")
        for i in range(3):
            await next_event(sub, "TextDelta", seen=seen)
            await session.redirect(f"c{i}")
            await next_event(sub, "SteerDelivered", seen=seen)
        await next_event(sub, "TextDelta", seen=seen)
        await session.redirect("c3")
        first = await until_turn_ends(sub, 1, seen)
        started = await next_event(sub, "TurnStarted", seen=seen)
        await until_turn_ends(sub, 2, seen)

    assert first.reason == TurnEnd.INTERRUPTED.value
    assert "redirected more than 3 times" in first.detail
    assert started.payload.prompt == "c3"
    visible = [m.text for m in of_type(seen, "MessageCompleted") if m.stop_reason == "redirected"]
    assert len(visible) == 3
    assert len(fake.message_requests) == 5
    assert seen_by_model(fake, 4) == [
        ("user", ["q"]),
        ("assistant", [visible[0]]),
        ("user", [corrected(visible[0], "c0")]),
        ("assistant", [visible[1]]),
        ("user", [corrected(visible[1], "c1")]),
        ("assistant", [visible[2]]),
        ("user", [corrected(visible[2], "c2"), "c3"]),  # the cut fourth reply is dropped
    ]


# -- crossed_reply = "marked": the project's earlier shape ------------------------------


async def test_marked_keeps_the_redirected_text_with_its_marker(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    session = await open_session(crossed_reply="marked")
    fake.enqueue(Endless(delta="wrong ", event_delay=0.005), Reply.of("the corrected answer"))
    seen: list[SessionEvent] = []
    with trio.fail_after(10), session.subscribe() as sub:
        await session.prompt("explain it in French")
        await text_deltas(sub, 2)
        await session.redirect("no, in English")
        done = await until_turn_ends(sub, 1, seen)

    assert done.text == "the corrected answer"
    kept = [m for m in of_type(seen, "MessageCompleted") if m.stop_reason == "redirected"]
    partial = kept[0].text
    assert seen_by_model(fake, 1) == [
        ("user", ["explain it in French"]),
        ("assistant", [f"{partial}\n\n[redirected]"]),
        ("user", ["[Correction from the user; the previous reply was cut short: no, in English]"]),
    ]


async def test_marked_keeps_the_interrupted_text_with_its_marker(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    session = await open_session(crossed_reply="marked")
    fake.enqueue(Endless(delta="word ", event_delay=0.005), Hang(), Reply.of("ok"))
    with trio.fail_after(10), session.subscribe() as sub:
        await session.prompt("write")
        await text_deltas(sub, 2)
        await session.interrupt("enough")
        first = await turn_completed(sub, 1)
        await session.prompt("then")
        await fake.wait_for_requests(2)
        await session.interrupt("stop")  # nothing streamed: nothing kept
        await turn_completed(sub, 2)
        await session.prompt("go on")
        await turn_completed(sub, 3)

    assert first.reason == TurnEnd.INTERRUPTED.value
    assert seen_by_model(fake, 2) == [
        ("user", ["write"]),
        ("assistant", [f"{first.text}\n\n[interrupted]"]),
        ("user", ["then", "go on"]),
    ]
