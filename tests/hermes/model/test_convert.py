"""Request parameters (with cache breakpoints) and stream assembly from SDK events."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter

from hermes.model import (
    FailureReason,
    Message,
    ModelRequest,
    SignatureDelta,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ToolInputDelta,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ToolUseComplete,
    ToolUseStart,
    Usage,
)
from hermes.model.convert import StreamAssembler, request_params
from hermes.model.errors import StreamProblem

EVENT = TypeAdapter(RawMessageStreamEvent)


def sdk(data: dict[str, Any]) -> Any:
    """A stream event as the client hands it to the assembler: the JSON object the
    SDK decoded, checked here against the SDK's own event schema."""
    EVENT.validate_python(data)
    return data


def message_start(input_tokens: int = 10, cache_read: int = 0) -> Any:
    return sdk(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": input_tokens,
                    "output_tokens": 1,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": cache_read,
                },
            },
        }
    )


def block_start(index: int, block: dict[str, Any]) -> Any:
    return sdk({"type": "content_block_start", "index": index, "content_block": block})


def delta(index: int, body: dict[str, Any]) -> Any:
    return sdk({"type": "content_block_delta", "index": index, "delta": body})


def block_stop(index: int) -> Any:
    return sdk({"type": "content_block_stop", "index": index})


def message_delta(stop_reason: str, output_tokens: int) -> Any:
    return sdk(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
    )


STOP = sdk({"type": "message_stop"})


def test_request_params_mark_system_tier_and_conversation_end_for_caching() -> None:
    request = ModelRequest(
        model="claude-x",
        system=(TextBlock("stable identity", cache=True), TextBlock("volatile date")),
        messages=(
            Message.user("first"),
            Message("assistant", (TextBlock("ok"),)),
            Message("user", (ToolResultBlock("toolu_1", "output"), TextBlock("and now?"))),
        ),
        tools=(ToolSpec("terminal", "run", {"type": "object"}),),
        thinking_budget=2048,
        stop_sequences=("STOP",),
    )
    params = request_params(request, "claude-y")
    assert params["model"] == "claude-y"
    assert params["system"] == [
        {"type": "text", "text": "stable identity", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "volatile date"},
    ]
    first, _, last = params["messages"]
    assert "cache_control" not in first["content"][0]
    assert last["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "output",
    }
    assert last["content"][1]["cache_control"] == {"type": "ephemeral"}
    assert params["tools"] == [
        {"name": "terminal", "description": "run", "input_schema": {"type": "object"}}
    ]
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert params["stop_sequences"] == ["STOP"]


def test_conversation_prefix_is_byte_stable_across_turns() -> None:
    turn1 = ModelRequest(model="m", messages=(Message.user("a"),))
    turn2 = ModelRequest(
        model="m",
        messages=(Message.user("a"), Message("assistant", (TextBlock("b"),)), Message.user("c")),
    )
    first = request_params(turn1, "m")["messages"][0]["content"][0]
    again = request_params(turn2, "m")["messages"][0]["content"][0]
    assert first["text"] == again["text"]
    # The breakpoint moves to the newest message; earlier blocks carry none.
    assert "cache_control" not in again
    assert request_params(turn2, "m")["messages"][2]["content"][0]["cache_control"]


def test_assembler_builds_thinking_text_and_tool_use_with_events() -> None:
    assembler = StreamAssembler()
    events = []
    raw = [
        message_start(input_tokens=12, cache_read=100),
        {"type": "future_event", "index": 0},  # unknown events are ignored
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, {"type": "thinking_delta", "thinking": "let me "}),
        delta(0, {"type": "thinking_delta", "thinking": "think"}),
        delta(0, {"type": "signature_delta", "signature": "sig=="}),
        block_stop(0),
        block_start(1, {"type": "text", "text": ""}),
        delta(1, {"type": "text_delta", "text": "Hello"}),
        delta(1, {"type": "text_delta", "text": " world"}),
        block_stop(1),
        block_start(2, {"type": "tool_use", "id": "toolu_9", "name": "terminal", "input": {}}),
        delta(2, {"type": "input_json_delta", "partial_json": ""}),
        delta(2, {"type": "input_json_delta", "partial_json": '{"command": '}),
        delta(2, {"type": "input_json_delta", "partial_json": '"ls"}'}),
        block_stop(2),
        message_delta("tool_use", 42),
        STOP,
    ]
    for event in raw:
        events.extend(assembler.feed(event))
    response = assembler.finish(attempts=1)
    assert response.message.content == (
        ThinkingBlock("let me think", "sig=="),
        TextBlock("Hello world"),
        ToolUseBlock("toolu_9", "terminal", {"command": "ls"}),
    )
    assert response.stop_reason == "tool_use"
    assert response.usage == Usage(12, 42, 0, 100)
    assert response.usage.prompt_tokens == 112
    assert TextDelta(1, "Hello") in events
    assert SignatureDelta(0, "sig==") in events
    assert ToolUseStart(2, "toolu_9", "terminal") in events
    assert ToolInputDelta(2, '"ls"}') in events
    assert events[-1] == ToolUseComplete(2, ToolUseBlock("toolu_9", "terminal", {"command": "ls"}))


def test_stream_without_message_stop_is_truncated_not_a_short_answer() -> None:
    assembler = StreamAssembler()
    for event in (
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, {"type": "text_delta", "text": "partial"}),
    ):
        assembler.feed(event)
    with pytest.raises(StreamProblem) as caught:
        assembler.finish(attempts=1)
    assert caught.value.reason is FailureReason.STREAM_TRUNCATED


@pytest.mark.parametrize(
    ("fragments", "needle"),
    [(['{"command": "ls"'], "not valid JSON"), (['["ls"]'], "must be a JSON object")],
)
def test_malformed_tool_arguments_are_classified(fragments: list[str], needle: str) -> None:
    assembler = StreamAssembler()
    assembler.feed(message_start())
    assembler.feed(block_start(0, {"type": "tool_use", "id": "t", "name": "terminal", "input": {}}))
    for fragment in fragments:
        assembler.feed(delta(0, {"type": "input_json_delta", "partial_json": fragment}))
    assert assembler.feed(block_stop(0)) == []  # no ToolUseComplete for unusable arguments
    assembler.feed(message_delta("tool_use", 5))
    assembler.feed({"type": "message_stop"})
    with pytest.raises(StreamProblem) as caught:
        assembler.finish(attempts=1)
    assert caught.value.reason is FailureReason.MALFORMED_OUTPUT
    assert needle in str(caught.value) and "terminal" in str(caught.value)


def test_a_tool_call_cut_at_the_output_limit_is_a_response_not_an_error() -> None:
    assembler = StreamAssembler()
    assembler.feed(message_start())
    assembler.feed(block_start(0, {"type": "tool_use", "id": "t", "name": "terminal", "input": {}}))
    assembler.feed(delta(0, {"type": "input_json_delta", "partial_json": '{"command": "ec'}))
    assembler.feed(block_stop(0))
    assembler.feed(message_delta("max_tokens", 4096))
    assembler.feed({"type": "message_stop"})
    response = assembler.finish(attempts=1)
    assert response.stop_reason == "max_tokens"
    assert [u.input for u in response.message.tool_uses()] == [{}]
    assert "not valid JSON" in response.malformed_inputs["t"]


@pytest.mark.parametrize(
    ("event", "needle"),
    [
        ({"type": "content_block_delta", "index": 0}, "'content_block_delta'"),
        ({"type": "content_block_start", "index": 1, "content_block": None}, "content_block"),
        ({"index": 0}, "None"),
        ("not an object", "'str'"),
    ],
)
def test_a_malformed_stream_event_is_a_clear_stream_problem(event: Any, needle: str) -> None:
    assembler = StreamAssembler()
    assembler.feed(message_start())
    assembler.feed(block_start(0, {"type": "text", "text": ""}))
    with pytest.raises(StreamProblem) as caught:
        assembler.feed(event)
    assert caught.value.reason is FailureReason.MALFORMED_OUTPUT
    assert "malformed" in str(caught.value) and needle in str(caught.value)


def test_tool_use_without_arguments_is_an_empty_object() -> None:
    assembler = StreamAssembler()
    assembler.feed(message_start())
    assembler.feed(block_start(0, {"type": "tool_use", "id": "t", "name": "list", "input": {}}))
    [complete] = assembler.feed(block_stop(0))
    assert isinstance(complete, ToolUseComplete) and complete.block.input == {}
