"""Tool-call hygiene through a real session: unknown tools, bad arguments, coercion, dedupe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.model import ToolResultBlock
from hermes.session import SessionHandle, TurnEnd
from hermes.store import StoreClient
from hermes.tools import ToolRegistry

from .helpers import assert_valid, payloads, result_text, results_by_id, tool_results


async def test_unknown_tool_gets_an_error_naming_the_available_tools(
    session: SessionHandle,
    fake: FakeProvider,
    store: StoreClient,
    registry: ToolRegistry,
    workdir: Path,
) -> None:
    (workdir / "a.txt").write_text("alpha\n")
    fake.enqueue(
        Reply.of(
            ToolUse("read_files", {"path": "a.txt"}, id="toolu_bad"),
            ToolUse("read_file", {"path": "a.txt"}, id="toolu_good"),
        ),
        Reply.of("Sorry, fixed."),
    )
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("read a.txt")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    assert_valid(transcript)
    results = results_by_id(transcript)
    bad = results["toolu_bad"]
    assert bad.is_error
    text = result_text(bad)
    assert text.startswith("Unknown tool 'read_files'. Available tools: ")
    for name in registry.names():
        assert name in text
    assert not results["toolu_good"].is_error
    assert "1|alpha" in result_text(results["toolu_good"])
    completed = {p.call_id: p.status for p in payloads(events, "ToolCompleted")}
    assert completed == {"toolu_bad": "invalid", "toolu_good": "ok"}
    assert [p.call_id for p in payloads(events, "ToolStarted")] == ["toolu_good"]


async def test_three_batches_of_only_unknown_tools_end_the_turn(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("browse", {"url": "a"})),
        Reply.of(ToolUse("browse", {"url": "b"}), ToolUse("fetch", {})),
        Reply.of(ToolUse("web_search", {"q": "c"})),
    )
    with trio.fail_after(10):
        result = await session.run("look it up")
    assert result.reason is TurnEnd.UNKNOWN_TOOLS
    assert "3 tool batches in a row" in result.detail
    assert len(fake.message_requests) == 3
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert len(transcript.messages) == 7
    assert all(r.is_error for m in transcript.messages for r in tool_results(m))
    first = result_text(tool_results(transcript.messages[2])[0])
    assert first.startswith("Unknown tool 'browse'. Available tools: terminal")
    last = result_text(tool_results(transcript.messages[6])[0])
    assert "web_search did not run because the turn was ended" in last


async def test_a_batch_with_a_known_tool_resets_the_unknown_streak(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("browse", {"url": "a"})),
        Reply.of(ToolUse("browse", {"url": "b"})),
        Reply.of(ToolUse("browse", {"url": "c"}), ToolUse("terminal", {"command": "echo ok"})),
        Reply.of(ToolUse("browse", {"url": "d"})),
        Reply.of(ToolUse("browse", {"url": "e"})),
        Reply.of("Giving up on browsing."),
    )
    with trio.fail_after(10):
        result = await session.run("browse")
    assert result.reason is TurnEnd.COMPLETED
    assert result.iterations == 5
    assert_valid(await store.load(session.id))


@pytest.mark.parametrize(
    "bad",
    [
        ToolUse("read_file", fragments=('{"pa', 'th": "a.t')),  # not JSON at all
        ToolUse("read_file", [1, 2]),  # JSON, but not an object
    ],
    ids=["broken-json", "list"],
)
async def test_arguments_that_are_not_an_object_are_never_run_and_the_turn_goes_on(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path, bad: ToolUse
) -> None:
    # The model client treats such a reply as malformed output and asks again.
    (workdir / "a.txt").write_text("alpha\n")
    fake.enqueue(
        Reply.of(bad),
        Reply.of(ToolUse("read_file", {"path": "a.txt"})),
        Reply.of("read it"),
    )
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("read a.txt")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert result.text == "read it"
    retried = payloads(events, "RequestRetried")
    assert [r.reason for r in retried] == ["malformed_output"]
    transcript = await store.load(session.id)
    assert_valid(transcript)
    uses = [u for m in transcript.messages for u in m.tool_uses()]
    assert [u.input for u in uses] == [{"path": "a.txt"}]
    assert len(payloads(events, "ToolStarted")) == 1


async def test_arguments_that_stay_malformed_get_an_error_result_and_the_turn_goes_on(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    # As Hermes: asked again twice, then the bad call is answered with an error, never run.
    bad = Reply.of(ToolUse("terminal", fragments=('{"command": "touch ran.txt"',)))
    fake.enqueue(bad, bad, bad, Reply.of("I will fix my arguments"))
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("go")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert result.text == "I will fix my arguments"
    assert not (workdir / "ran.txt").exists()
    assert [r.reason for r in payloads(events, "RequestRetried")] == ["malformed_output"] * 2
    assert payloads(events, "ToolStarted") == []
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    [use] = transcript.messages[1].tool_uses()
    assert use.input == {}  # what the API accepts; the broken text is in the error below
    [answer] = transcript.messages[2].content
    assert isinstance(answer, ToolResultBlock) and answer.is_error
    assert "not valid JSON" in str(answer.content) and "Nothing was run" in str(answer.content)
    # The model saw its error: the follow-up request carries the result.
    assert "not valid JSON" in json.dumps(fake.message_requests[-1].body["messages"][-1])


async def test_arguments_are_coerced_to_the_schema_types(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    (workdir / "lines.txt").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    fake.enqueue(
        Reply.of(ToolUse("read_file", {"path": "lines.txt", "offset": "3", "limit": "5"})),
        Reply.of("ok"),
    )
    with trio.fail_after(10):
        result = await session.run("read some lines")
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    block = tool_results(transcript.messages[2])[0]
    assert not block.is_error
    text = result_text(block)
    assert "     3|line 3" in text and "     7|line 7" in text
    assert "line 2\n" not in text and "line 8" not in text
    assert "[Showing lines 3-7 of 20. Continue with offset=8.]" in text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"path": "a.txt", "limit": "seven"}, "field 'limit' must be an integer"),
        ({"offset": 2}, "missing required field 'path'"),
    ],
    ids=["wrong-type", "missing-field"],
)
async def test_arguments_that_do_not_fit_the_schema_get_a_clear_error(
    session: SessionHandle,
    fake: FakeProvider,
    store: StoreClient,
    workdir: Path,
    args: dict[str, object],
    expected: str,
) -> None:
    (workdir / "a.txt").write_text("alpha\n")
    fake.enqueue(Reply.of(ToolUse("read_file", args)), Reply.of("noted"))
    with trio.fail_after(10):
        result = await session.run("read")
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    block = tool_results(transcript.messages[2])[0]
    assert block.is_error
    text = result_text(block)
    assert text.startswith("Invalid arguments for tool 'read_file':")
    assert expected in text
    assert "Nothing was run." in text


async def test_identical_calls_in_one_batch_run_once(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    command = "echo x >> log.txt; wc -l < log.txt"
    fake.enqueue(
        Reply.of(
            ToolUse("terminal", {"command": command}, id="toolu_1"),
            ToolUse("terminal", {"command": command}, id="toolu_2"),
            # The same call once its defaults are filled in (and "180" coerced).
            ToolUse("terminal", {"timeout": "180", "command": command}, id="toolu_3"),
        ),
        Reply.of("appended"),
    )
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("append")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert (workdir / "log.txt").read_text() == "x\n"
    transcript = await store.load(session.id)
    assert_valid(transcript)
    blocks = tool_results(transcript.messages[2])
    assert [b.tool_use_id for b in blocks] == ["toolu_1", "toolu_2", "toolu_3"]
    assert {result_text(b) for b in blocks} == {"1\n[exit code: 0]"}
    assert [p.call_id for p in payloads(events, "ToolStarted")] == ["toolu_1"]
