"""Scripted replies round-trip through the real SDK: text, thinking, tool_use, usage, JSON."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import anthropic
import httpx2
import pytest
import trio

from hermes.fake import (
    FakeProvider,
    RedactedThinking,
    Reply,
    Text,
    Thinking,
    ToolUse,
    Usage,
)

from .conftest import API_KEY, MODEL, sdk_stream_generators_collected, user


async def test_stream_helper_text_thinking_tool_use(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(
        Reply.of(
            Thinking(deltas=("Let me ", "look."), signature="sig-123"),
            Text("Listing ", chunk_size=3),
            ToolUse("terminal", {"command": "ls -la"}, id="toolu_abc", chunk_size=5),
        )
    )
    seen: list[str] = []
    with trio.fail_after(5):
        async with client.messages.stream(model=MODEL, max_tokens=100, messages=user("hi")) as s:
            async for event in s:
                seen.append(event.type)
            final = await s.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use"]
    thinking, text, tool = final.content
    assert thinking.type == "thinking" and thinking.thinking == "Let me look."
    assert thinking.signature == "sig-123"
    assert text.type == "text" and text.text == "Listing "
    assert tool.type == "tool_use" and tool.id == "toolu_abc" and tool.name == "terminal"
    assert tool.input == {"command": "ls -la"}
    assert final.stop_reason == "tool_use"
    assert final.model == MODEL
    assert seen[0] == "message_start" and seen[-1] == "message_stop"
    assert seen.count("thinking") == 2 and seen.count("signature") == 1
    assert seen.count("text") == 3  # "Lis", "tin", "g "
    assert seen.count("input_json") >= 4


async def test_raw_stream_events_and_indexes(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(Reply.of("Hello", ToolUse("read_file", {"path": "a.txt"}), stop_reason="tool_use"))
    events: list[Any] = []
    with trio.fail_after(5):
        stream = await client.messages.create(
            model=MODEL, max_tokens=100, messages=user("hi"), stream=True
        )
        async with stream:
            async for event in stream:
                events.append(event)
    types = [e.type for e in events]
    assert types == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert [e.index for e in events if e.type.startswith("content_block")] == [0] * 3 + [1] * 4
    tool_start = events[4].content_block
    assert tool_start.type == "tool_use" and tool_start.id.startswith("toolu_")
    fragments = [e.delta.partial_json for e in events[5:7]]
    assert fragments[0] == "" and json.loads("".join(fragments)) == {"path": "a.txt"}
    assert events[-2].delta.stop_reason == "tool_use"


async def test_sse_wire_grammar(fake: FakeProvider) -> None:
    """Byte-level: ``event:`` lines, ``ping``, request-id, usage at start and (cumulative) end."""
    fake.enqueue(
        Reply.of(
            "Hi",
            usage=Usage(
                input_tokens=11,
                output_tokens=7,
                cache_creation_input_tokens=3,
                cache_read_input_tokens=5,
            ),
        )
    )
    body = {"model": MODEL, "max_tokens": 10, "messages": user("x"), "stream": True}
    with trio.fail_after(5):
        async with httpx2.AsyncClient(trust_env=False) as http:
            response = await http.post(
                f"{fake.base_url}/v1/messages", json=body, headers={"x-api-key": API_KEY}
            )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["transfer-encoding"] == "chunked"
    assert response.headers["request-id"] == fake.requests[-1].request_id
    blocks = [b for b in response.text.split("\n\n") if b]
    parsed = []
    for block in blocks:
        event_line, data_line = block.split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        data = json.loads(data_line[len("data: ") :])
        assert data["type"] == event_line[len("event: ") :]
        parsed.append(data)
    assert [d["type"] for d in parsed] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start_usage = parsed[0]["message"]["usage"]
    assert start_usage["input_tokens"] == 11 and start_usage["output_tokens"] == 1
    assert start_usage["cache_creation_input_tokens"] == 3
    assert start_usage["cache_read_input_tokens"] == 5
    end = parsed[-2]
    assert end["usage"] == {
        "input_tokens": 11,
        "cache_creation_input_tokens": 3,
        "cache_read_input_tokens": 5,
        "output_tokens": 7,
    }
    assert end["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert parsed[0]["message"]["id"].startswith("msg_")


async def test_usage_reaches_final_message(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    usage = Usage(
        input_tokens=120,
        output_tokens=42,
        cache_creation_input_tokens=1000,
        cache_read_input_tokens=2000,
    )
    fake.enqueue(Reply.of("ok", usage=usage), Reply.of("ok", usage=usage))
    with trio.fail_after(5):
        async with client.messages.stream(model=MODEL, max_tokens=100, messages=user("a")) as s:
            streamed = await s.get_final_message()
        plain = await client.messages.create(model=MODEL, max_tokens=100, messages=user("a"))
    for message in (streamed, plain):
        assert message.usage.input_tokens == 120
        assert message.usage.output_tokens == 42
        assert message.usage.cache_creation_input_tokens == 1000
        assert message.usage.cache_read_input_tokens == 2000


@pytest.mark.parametrize(
    "stop_reason",
    ["end_turn", "max_tokens", "stop_sequence", "pause_turn", "refusal"],
)
async def test_any_stop_reason(
    fake: FakeProvider, client: anthropic.AsyncAnthropic, stop_reason: str
) -> None:
    stop_sequence = "STOP" if stop_reason == "stop_sequence" else None
    fake.enqueue(Reply.of("partial", stop_reason=stop_reason, stop_sequence=stop_sequence))
    fake.enqueue(Reply.of("partial", stop_reason=stop_reason, stop_sequence=stop_sequence))
    with trio.fail_after(5):
        async with client.messages.stream(model=MODEL, max_tokens=5, messages=user("a")) as s:
            streamed = await s.get_final_message()
        plain = await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    for message in (streamed, plain):
        assert message.stop_reason == stop_reason
        assert message.stop_sequence == stop_sequence


async def test_refusal_stop_details(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "no"}
    fake.enqueue(Reply.of("", stop_reason="refusal", stop_details=details))
    with trio.fail_after(5):
        message = await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert message.stop_reason == "refusal"
    assert message.stop_details is not None
    assert message.stop_details.category == "cyber"


async def test_non_streaming_json(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.enqueue(
        Reply.of(
            Thinking("hmm", signature="s1"),
            RedactedThinking("opaque"),
            "Answer",
            ToolUse("terminal", {"command": "pwd"}),
        )
    )
    with trio.fail_after(5):
        raw = await client.messages.with_raw_response.create(
            model=MODEL, max_tokens=100, messages=user("a")
        )
    message = await raw.parse()
    assert raw.headers["content-type"] == "application/json"
    assert raw.headers["request-id"] == fake.requests[-1].request_id
    assert message.id.startswith("msg_") and message.role == "assistant"
    assert [b.type for b in message.content] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
    ]
    assert message.content[1].type == "redacted_thinking"
    assert message.content[1].data == "opaque"
    tool = message.content[3]
    assert tool.type == "tool_use" and tool.input == {"command": "pwd"}
    assert tool.id.startswith("toolu_fake_")
    assert message.stop_reason == "tool_use"
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0


async def test_redacted_thinking_streams(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(Reply.of(RedactedThinking("blob"), "after"))
    with trio.fail_after(5):
        async with client.messages.stream(model=MODEL, max_tokens=100, messages=user("a")) as s:
            final = await s.get_final_message()
    assert [b.type for b in final.content] == ["redacted_thinking", "text"]
    assert final.content[0].type == "redacted_thinking" and final.content[0].data == "blob"


async def test_tool_input_fragments_as_scripted(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fragments = ('{"pa', 'th": "/tmp/', 'x.txt"', "}")
    fake.enqueue(Reply.of(ToolUse("read_file", fragments=fragments)))
    partials: list[str] = []
    with trio.fail_after(5):
        stream = await client.messages.create(
            model=MODEL, max_tokens=100, messages=user("a"), stream=True
        )
        async with stream:
            async for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                    partials.append(event.delta.partial_json)
    assert tuple(partials) == fragments


async def test_malformed_tool_json_reaches_the_client(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    """Deliberately broken ``partial_json``: the helper refuses it, raw mode passes it on."""
    broken = ('{"command": ', "ls", "}")
    fake.enqueue(Reply.of(ToolUse("terminal", fragments=broken)))
    fake.enqueue(Reply.of(ToolUse("terminal", fragments=broken)))
    with trio.fail_after(60):  # full gc passes below: seconds on a big, busy heap
        async with sdk_stream_generators_collected():
            with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
                async with client.messages.stream(
                    model=MODEL, max_tokens=100, messages=user("a")
                ) as s:
                    await s.get_final_message()
        stream = await client.messages.create(
            model=MODEL, max_tokens=100, messages=user("a"), stream=True
        )
        joined = ""
        async with stream:
            async for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                    joined += event.delta.partial_json
    assert joined == "".join(broken)
    with pytest.raises(ValueError):
        json.loads(joined)


async def test_event_delay_paces_the_stream(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(Reply.of(Text(deltas=("a", "b", "c", "d")), event_delay=0.03))
    arrivals: list[float] = []
    with trio.fail_after(5):
        async with client.messages.stream(model=MODEL, max_tokens=100, messages=user("a")) as s:
            async for event in s:
                if event.type == "text":
                    arrivals.append(time.monotonic())
    assert len(arrivals) == 4
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert all(g >= 0.02 for g in gaps), gaps
    assert fake.requests[-1].events_sent == 10


async def test_headers_delay(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.enqueue(Reply.of("late", delay=0.15))
    start = time.monotonic()
    with trio.fail_after(5):
        message = await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert time.monotonic() - start >= 0.14
    assert message.content[0].type == "text" and message.content[0].text == "late"


async def test_extra_response_headers(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.enqueue(Reply.of("x", headers=[("anthropic-ratelimit-requests-remaining", "7")]))
    with trio.fail_after(5):
        raw = await client.messages.with_raw_response.create(
            model=MODEL, max_tokens=5, messages=user("a")
        )
    assert raw.headers["anthropic-ratelimit-requests-remaining"] == "7"


async def test_model_override_and_message_id(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(Reply.of("x", model="claude-other", message_id="msg_custom"))
    with trio.fail_after(5):
        async with client.messages.stream(model=MODEL, max_tokens=5, messages=user("a")) as s:
            final = await s.get_final_message()
    assert final.model == "claude-other" and final.id == "msg_custom"


def test_block_validation() -> None:
    with pytest.raises(ValueError):
        Text("abc", deltas=("a", "x"))
    with pytest.raises(ValueError):
        Thinking("abc", deltas=("a",))
    assert Text(deltas=("a", "b")).text == "ab"
    assert ToolUse("t", fragments=('{"a":', " 1}")).input == {"a": 1}
    assert ToolUse("t", fragments=("{oops",)).input == {}
    assert Reply.of("x").effective_stop_reason() == "end_turn"
    assert Reply.of(ToolUse("t", {})).effective_stop_reason() == "tool_use"
