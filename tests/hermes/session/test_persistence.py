"""Persistence through a real session and a real SQLite store: as it happens, resume, failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.model import Message
from hermes.model.types import TextBlock, ToolUseBlock
from hermes.session import SessionHandle, Subscriber, TurnEnd, TurnResult
from hermes.store import StoreClient

from .conftest import SessionFactory
from .helpers import (
    assert_valid,
    payloads,
    result_text,
    results_by_id,
    strip_cache,
    tool_results,
)


async def _wait_for(sub: Subscriber, kind: str, **fields: Any) -> Any:
    """The payload of the next event of type ``kind`` whose fields match."""
    async for event in sub.receive:
        if event.type == kind and all(getattr(event.payload, k) == v for k, v in fields.items()):
            return event.payload
    raise AssertionError(f"the event stream ended before a {kind}")


def _wire(messages: Any) -> str:
    return json.dumps(strip_cache(messages), sort_keys=True)


async def test_each_reply_and_each_result_is_in_the_store_as_soon_as_it_lands(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("alpha\n")
    fake.enqueue(
        Reply.of(
            "Checking.",
            ToolUse("read_file", {"path": "a.txt"}, id="toolu_read"),
            ToolUse("terminal", {"command": "sleep 5"}, id="toolu_sleep"),
        )
    )
    outcome: list[TurnResult] = []

    async def run() -> None:
        outcome.append(await session.run("read, then wait"))

    with session.subscribe() as sub, trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            await _wait_for(sub, "ToolStarted", call_id="toolu_sleep")
            # The reply was persisted before any tool ran.
            transcript = await store.load(session.id)
            assert transcript.messages[1].role == "assistant"
            assert [u.id for u in transcript.messages[1].tool_uses()] == [
                "toolu_read",
                "toolu_sleep",
            ]
            # The read's result is flushed while the terminal still runs.
            with trio.fail_after(2):
                while len(transcript.messages) < 3:
                    await trio.sleep(0.01)
                    transcript = await store.load(session.id)
            landed = tool_results(transcript.messages[2])
            assert [b.tool_use_id for b in landed] == ["toolu_read"]
            assert "1|alpha" in result_text(landed[0])
            assert transcript.open_tool_uses == ("toolu_sleep",)
            finished = [p.call_id for p in payloads(sub.drain(), "ToolCompleted")]
            assert "toolu_sleep" not in finished
            await session.interrupt("enough")
    result = outcome[0]
    assert result.reason is TurnEnd.INTERRUPTED
    transcript = await store.load(session.id)
    assert_valid(transcript)
    results = results_by_id(transcript)
    assert list(results) == ["toolu_read", "toolu_sleep"]
    stopped = result_text(results["toolu_sleep"])
    assert "[Command interrupted]" in stopped and "[exit code: 130]" in stopped
    assert len(fake.message_requests) == 1


async def test_resume_after_close_loads_the_same_history_and_continues(
    session: SessionHandle,
    open_session: SessionFactory,
    fake: FakeProvider,
    store: StoreClient,
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "echo persisted"}, id="toolu_echo")),
        Reply.of("first turn done"),
    )
    with trio.fail_after(10):
        await session.run("turn one")
        before = await store.load(session.id)
        closed = await session.close("bye")
    assert closed.result is None
    assert (await store.get_session(session.id)).ended

    with trio.fail_after(10):
        resumed = await open_session(session_id=session.id)
        state = await resumed.state()
        loaded = await store.load(session.id)
    assert resumed.id == session.id
    assert state.messages == len(before.messages) == 4
    assert state.usage == before.session.usage
    assert loaded.messages == before.messages
    assert not loaded.session.ended

    fake.enqueue(Reply.of("second turn done"))
    with trio.fail_after(10):
        result = await resumed.run("turn two")
    assert result.reason is TurnEnd.COMPLETED
    assert result.first_seq == 4
    after = await store.load(session.id)
    assert_valid(after)
    assert after.messages[:4] == before.messages
    assert [m.text() for m in after.messages[4:]] == ["turn two", "second turn done"]

    # The resumed request replays the history byte for byte, under the same system prompt.
    old, new = fake.message_requests[1].body, fake.message_requests[2].body
    assert _wire(new["messages"][:3]) == _wire(old["messages"])
    assert new["messages"][3]["role"] == "assistant"
    assert json.dumps(new["system"]) == json.dumps(old["system"])


async def test_resume_after_the_session_stopped_mid_batch(
    session: SessionHandle,
    open_session: SessionFactory,
    fake: FakeProvider,
    store: StoreClient,
) -> None:
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": "sleep 30"}, id="toolu_sleep")))
    with session.subscribe() as sub, trio.fail_after(10):
        await session.prompt("sleep")
        await _wait_for(sub, "ToolStarted", call_id="toolu_sleep")
        await session.target.stop()  # type: ignore[attr-defined]
    transcript = await store.load(session.id)
    assert_valid(transcript)
    block = results_by_id(transcript)["toolu_sleep"]
    assert block.is_error
    assert "any process it started was killed" in result_text(block)

    fake.enqueue(Reply.of("recovered"))
    with trio.fail_after(10):
        resumed = await open_session(session_id=session.id)
        result = await resumed.run("are you there?")
    assert result.reason is TurnEnd.COMPLETED
    assert result.text == "recovered"
    after = await store.load(session.id)
    assert_valid(after)
    # The new prompt is merged into the trailing results message, which is otherwise kept.
    assert after.messages[:2] == transcript.messages[:2]
    merged = after.messages[2]
    assert merged.content[:-1] == transcript.messages[2].content
    assert merged.text() == "are you there?"
    assert fake.message_requests[-1].status == 200


async def test_a_dead_store_fails_the_turn_with_a_clear_reason(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    await store.target.stop()  # type: ignore[attr-defined]
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("hello?")
        events = sub.drain()
        state = await session.state()
    assert result.reason is TurnEnd.FAILED
    assert "store" in result.detail and "not running" in result.detail
    errors = payloads(events, "ErrorOccurred")
    assert errors and errors[0].reason == "store"
    assert payloads(events, "TurnCompleted")[0].reason == "failed"
    assert fake.message_requests == []  # nothing is sent that the store does not hold
    assert not state.busy


async def test_a_store_failure_mid_turn_fails_the_turn(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    command = "sleep 0.3; echo done"
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": command}, id="toolu_t")), Reply.of("x"))
    outcome: list[TurnResult] = []

    async def run() -> None:
        outcome.append(await session.run("work"))

    with session.subscribe() as sub, trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            await _wait_for(sub, "ToolStarted", call_id="toolu_t")
            await store.target.kill()  # type: ignore[attr-defined]
        events = sub.drain()
    result = outcome[0]
    assert result.reason is TurnEnd.FAILED
    assert "store" in result.detail
    assert len(fake.message_requests) == 1  # no request after results that were not saved
    assert payloads(events, "ErrorOccurred")[0].reason == "store"
    assert not (await session.state()).busy


async def test_resume_gives_calls_left_open_by_a_crash_a_result(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    # What a crash mid-batch leaves behind: a reply with tool uses and no results.
    info = await store.create_session(model="claude-test")
    uses = (
        ToolUseBlock("toolu_lost_1", "terminal", {"command": "echo hi"}),
        ToolUseBlock("toolu_lost_2", "read_file", {"path": "a.txt"}),
    )
    await store.append(
        info.id,
        [Message.user("go"), Message("assistant", (TextBlock("Working."), *uses))],
        expected_seq=0,
    )
    assert (await store.load(info.id)).open_tool_uses == ("toolu_lost_1", "toolu_lost_2")

    with trio.fail_after(10):
        session = await open_session(session_id=info.id)
    repaired = await store.load(info.id)
    assert_valid(repaired)
    blocks = tool_results(repaired.messages[2])
    assert [b.tool_use_id for b in blocks] == ["toolu_lost_1", "toolu_lost_2"]
    for block in blocks:
        assert block.is_error
        assert "has no result: the session restarted while it was running" in result_text(block)

    fake.enqueue(Reply.of("picking up again"))
    with trio.fail_after(10):
        result = await session.run("continue")
    assert result.reason is TurnEnd.COMPLETED
    sent = fake.message_requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in sent[2]["content"] if b["type"] == "tool_result"] == [
        "toolu_lost_1",
        "toolu_lost_2",
    ]
    assert_valid(await store.load(info.id))


async def test_a_new_session_can_be_given_its_id(
    open_session: SessionFactory, store: StoreClient
) -> None:
    with trio.fail_after(10):
        session = await open_session(session_id="chosen-id-1")
        state = await session.state()
    assert session.id == state.id == "chosen-id-1"
    info = await store.get_session("chosen-id-1")
    assert (info.model, info.message_count) == ("claude-test", 0)
