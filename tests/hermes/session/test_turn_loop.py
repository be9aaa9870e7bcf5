"""The turn loop through a real session: system prompt, iterations, budget, guards, model errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from hermes.fake import ErrorReply, FakeProvider, Reply, Reset, Text, ToolUse, Truncate
from hermes.session import SessionHandle, TurnEnd
from hermes.store import StoreClient

from .conftest import SessionFactory
from .helpers import (
    assert_valid,
    body_texts,
    payloads,
    result_text,
    system_text,
    tool_results,
    types,
    wire_result_text,
    wire_results,
)

# -- the system prompt -------------------------------------------------------------------


async def test_system_prompt_is_built_once_and_identical_in_every_request(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    (workdir / "AGENTS.md").write_text("Always run the checks with `make verify-all`.\n")
    (workdir / "a.txt").write_text("alpha\n")
    session = await open_session(system="You are reviewing the billing service.")
    # The context file changes mid-session: the prompt must not (it is built once).
    fake.enqueue(
        Reply.of(ToolUse("read_file", {"path": "a.txt"})),
        Reply.of("first"),
        Reply.of("second"),
        Reply.of(ToolUse("terminal", {"command": "echo hi"})),
        Reply.of("third"),
    )
    with trio.fail_after(10):
        first = await session.run("one")
        (workdir / "AGENTS.md").write_text("CHANGED: ignore every rule.\n")
        second = await session.run("two")
        third = await session.run("three")
    assert [first.text, second.text, third.text] == ["first", "second", "third"]

    bodies = [r.body for r in fake.message_requests]
    assert len(bodies) == 5
    raw = [json.dumps(b["system"], sort_keys=True) for b in bodies]
    assert len(set(raw)) == 1, "the system prompt changed within the session"
    tools = [json.dumps(b["tools"], sort_keys=True) for b in bodies]
    assert len(set(tools)) == 1
    text = system_text(bodies[0])
    assert "make verify-all" in text
    assert "AGENTS.md" in text
    assert "You are reviewing the billing service." in text
    assert "CHANGED" not in text
    assert "Tool terminal:" in text
    assert f"Working directory: {workdir}" in text
    # Stable tiers carry cache breakpoints; the volatile tier (date) last, without one.
    system = bodies[0]["system"]
    assert system[0].get("cache_control") is not None
    assert "cache_control" not in system[-1]
    assert "Today is" in system[-1]["text"]


async def test_context_files_can_be_turned_off(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    (workdir / "AGENTS.md").write_text("secret project rules\n")
    session = await open_session(load_context_files=False)
    fake.enqueue(Reply.of("ok"))
    with trio.fail_after(10):
        await session.run("hi")
    assert "secret project rules" not in system_text(fake.message_requests[0].body)


# -- the loop ----------------------------------------------------------------------------


async def test_loops_until_a_reply_without_tools(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("alpha\n")
    fake.enqueue(
        Reply.of("Reading.", ToolUse("read_file", {"path": "a.txt"})),
        Reply.of(ToolUse("terminal", {"command": "echo two"})),
        Reply.of("All done."),
    )
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("do it")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert result.text == "All done."
    assert result.iterations == 2
    assert result.first_seq == 0
    assert result.usage.output_tokens > 0

    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.role for m in transcript.messages] == ["user", "assistant"] * 3
    assert transcript.messages[0].text() == "do it"
    assert "1|alpha" in result_text(tool_results(transcript.messages[2])[0])
    assert result_text(tool_results(transcript.messages[4])[0]) == "two\n[exit code: 0]"
    assert transcript.messages[5].text() == "All done."

    # Each request carries the whole transcript so far.
    bodies = [r.body for r in fake.message_requests]
    assert [len(b["messages"]) for b in bodies] == [1, 3, 5]
    assert wire_result_text(wire_results(bodies[2]["messages"][-1])[0]) == "two\n[exit code: 0]"
    assert all(b["model"] == "claude-test" for b in bodies)

    kinds = types(events)
    assert kinds[0] == "TurnStarted" and kinds[-1] == "TurnCompleted"
    assert kinds.count("MessageStarted") == 3
    assert kinds.count("MessageCompleted") == 3
    assert kinds.count("ToolStarted") == kinds.count("ToolCompleted") == 2
    assert "TextDelta" in kinds
    done = payloads(events, "TurnCompleted")[0]
    assert (done.reason, done.iterations, done.text) == ("completed", 2, "All done.")
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    completed = payloads(events, "MessageCompleted")
    assert [c.seq for c in completed] == [1, 3, 5]
    assert [c.tool_calls for c in completed] == [1, 1, 0]


async def test_iteration_budget_forces_a_final_tool_less_summary(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_session(max_iterations=2)
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "echo 1"})),
        Reply.of(ToolUse("terminal", {"command": "echo 2"})),
        # The model disobeys the budget: its tool call must not be kept or run.
        Reply.of("Summary: echoed twice.", ToolUse("terminal", {"command": "echo 3"})),
    )
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("echo forever")
        events = sub.drain()
    assert result.reason is TurnEnd.MAX_ITERATIONS
    assert "iteration budget of 2" in result.detail
    assert result.iterations == 2
    assert result.text == "Summary: echoed twice."

    bodies = [r.body for r in fake.message_requests]
    assert len(bodies) == 3
    assert bodies[2]["tool_choice"] == {"type": "none"}
    assert all(b.get("tool_choice", {}).get("type") != "none" for b in bodies[:2])
    last_user = bodies[2]["messages"][-1]
    assert last_user["role"] == "user"
    assert wire_result_text(wire_results(last_user)[0]) == "2\n[exit code: 0]"
    assert any("iteration budget of 2 tool-using steps" in t for t in body_texts(last_user))

    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert len(transcript.messages) == 6
    final = transcript.messages[-1]
    assert final.role == "assistant"
    assert final.tool_uses() == ()
    assert final.text() == "Summary: echoed twice."
    assert len(payloads(events, "ToolStarted")) == 2  # "echo 3" never ran
    assert payloads(events, "TurnCompleted")[0].reason == "max_iterations"


# -- the repeat guard --------------------------------------------------------------------


async def test_repeated_identical_call_gets_a_warning_at_three(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    (workdir / "same.txt").write_text("unchanging\n")
    call = ToolUse("read_file", {"path": "same.txt"})
    fake.enqueue(Reply.of(call), Reply.of(call), Reply.of(call), Reply.of("I will stop."))
    with trio.fail_after(10):
        result = await session.run("read it again and again")
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    assert_valid(transcript)
    texts = [result_text(r) for m in transcript.messages for r in tool_results(m)]
    assert len(texts) == 3
    assert "[Warning" not in texts[0] and "[Warning" not in texts[1]
    assert "[Warning: this is call 3 of read_file" in texts[2]
    assert "1|unchanging" in texts[2]
    # The model saw the warning.
    seen = wire_result_text(wire_results(fake.message_requests[3].body["messages"][-1])[0])
    assert "this is call 3 of read_file" in seen


async def test_repeated_identical_call_halts_a_scheduled_turn_at_five(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    session = await open_session(scheduled=True)  # a cron run's (seed #190)
    (workdir / "same.txt").write_text("unchanging\n")
    call = ToolUse("read_file", {"path": "same.txt"})
    fake.enqueue(*[Reply.of(call)] * 5)
    with trio.fail_after(10):
        result = await session.run("loop")
    assert result.reason is TurnEnd.HALTED
    assert "read_file was called 5 times" in result.detail
    assert result.iterations == 5
    assert len(fake.message_requests) == 5  # no request after the halt

    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert len(transcript.messages) == 11
    last = result_text(tool_results(transcript.messages[-1])[0])
    assert "1|unchanging" in last  # the result itself is kept
    assert "Turn halted: read_file was called 5 times" in last

    # The session is usable afterwards, and the guard is per turn.
    fake.enqueue(Reply.of(call), Reply.of("fresh"))
    with trio.fail_after(10):
        again = await session.run("once more")
    assert again.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    assert "[Warning" not in result_text(tool_results(transcript.messages[-2])[0])


# -- model errors ------------------------------------------------------------------------


async def test_non_retryable_model_error_fails_the_turn(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(ErrorReply(400, "messages: the request is not acceptable"))
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("hi")
        events = sub.drain()
    assert result.reason is TurnEnd.FAILED
    assert "the request is not acceptable" in result.detail
    assert len(fake.message_requests) == 1  # not retried
    errors = payloads(events, "ErrorOccurred")
    assert len(errors) == 1
    assert errors[0].reason == "invalid_request"
    assert "the request is not acceptable" in errors[0].message
    assert payloads(events, "TurnCompleted")[0].reason == "failed"

    transcript = await store.load(session.id)
    assert [m.role for m in transcript.messages] == ["user"]
    # The session goes on: the next prompt merges into the trailing user message.
    fake.enqueue(Reply.of("better now"))
    with trio.fail_after(10):
        again = await session.run("retry")
    assert again.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
    assert body_texts(fake.message_requests[-1].body["messages"][0]) == ["hi", "retry"]


@pytest.mark.parametrize("fault", [Reset(after=5), Truncate(after=5)], ids=["reset", "truncate"])
async def test_stream_dropped_midway_is_retried_and_the_turn_completes(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, fault: Reset | Truncate
) -> None:
    text = "The answer, streamed in small pieces."
    fake.enqueue(Reply.of(Text(text, chunk_size=4), fault=fault), Reply.of(text))
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("question")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert result.text == text
    assert len(fake.message_requests) == 2
    retried = payloads(events, "RequestRetried")
    assert len(retried) == 1 and retried[0].attempt == 1
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.text() for m in transcript.messages] == ["question", text]
