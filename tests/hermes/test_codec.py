"""hermes.codec: lossless round trips, deterministic bytes, clear errors."""

from __future__ import annotations

import json
from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes import codec
from hermes.codec import Blocks, CodecError
from hermes.model.types import (
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

from .transcripts import blocks, messages, usages

EVERY_BLOCK = (
    TextBlock("hi", cache=True),
    ThinkingBlock("hmm", "sig"),
    RedactedThinkingBlock("opaque"),
    ToolUseBlock("toolu_1", "terminal", {"command": "ls", "n": [1, 2.5, None, {"x": True}]}),
    ToolResultBlock("toolu_1", "out", is_error=True),
    ToolResultBlock("toolu_2", (TextBlock("a"), ImageBlock("image/png", "iVBO"))),
    ImageBlock("image/jpeg", "/9j/"),
)


@given(blocks)
def test_block_round_trips_through_plain_msgpack_and_json(block: Any) -> None:
    cls = type(block)
    assert codec.from_plain(codec.to_plain(block), cls) == block
    assert codec.unpack(codec.pack(block), cls) == block
    assert codec.from_json(codec.to_json(block), cls) == block


@given(messages)
def test_message_round_trip_is_byte_identical(message: Message) -> None:
    packed = codec.pack(message)
    back = codec.unpack(packed, Message)
    assert back == message
    assert codec.pack(back) == packed
    assert codec.from_json(codec.to_json(message), Message) == message
    # Plain data survives msgpack unchanged (lists, not tuples, in the plain form).
    assert msgpack.unpackb(packed, raw=False) == codec.to_plain(message)


@given(st.lists(blocks, max_size=6).map(tuple))
def test_blocks_round_trip(content: Blocks) -> None:
    packed = codec.pack_blocks(content)
    assert codec.unpack_blocks(packed) == content
    assert codec.pack_blocks(codec.unpack_blocks(packed)) == packed


@given(usages)
def test_usage_round_trip(usage: Usage) -> None:
    assert codec.unpack(codec.pack(usage), Usage) == usage
    assert codec.from_json(codec.to_json(usage), Usage) == usage


def test_blocks_are_tagged_with_wire_names_first() -> None:
    plain = codec.to_plain(EVERY_BLOCK, Blocks)
    assert [b["type"] for b in plain] == [
        "text",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_result",
        "tool_result",
        "image",
    ]
    assert all(next(iter(b)) == "type" for b in plain)
    assert plain[0] == {"type": "text", "text": "hi", "cache": True}
    assert plain[5]["content"] == [
        {"type": "text", "text": "a", "cache": False},
        {"type": "image", "media_type": "image/png", "data": "iVBO"},
    ]
    assert json.loads(codec.to_json(EVERY_BLOCK, Blocks)) == plain


def test_equal_values_pack_to_equal_bytes() -> None:
    a = Message("assistant", (ToolUseBlock("t", "n", {"b": 1, "a": [1.0, "x"]}),))
    b = Message("assistant", (ToolUseBlock("t", "n", {"b": 1, "a": [1.0, "x"]}),))
    assert a is not b
    assert codec.pack(a) == codec.pack(b)


def test_plain_form_does_not_share_tool_input() -> None:
    block = ToolUseBlock("t", "n", {"a": [1]})
    plain = codec.to_plain(block)
    plain["input"]["a"].append(2)
    assert block.input == {"a": [1]}


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"role": "system", "content": []}, "role: expected one of 'user', 'assistant'"),
        ({"role": "user"}, "content: required field missing"),
        ({"role": "user", "content": "hi"}, "content: expected a list, got str"),
        (
            {"role": "user", "content": [{"type": "text", "text": 5}]},
            "content[0].text: expected str",
        ),
        (
            {"role": "user", "content": [{"type": "text", "text": "a", "cache": 1}]},
            "content[0].cache: expected bool, got int",
        ),
        (
            {"role": "user", "content": [{"type": "video"}]},
            "content[0]: unknown block type 'video'",
        ),
        ({"role": "user", "content": [{"text": "a"}]}, "content[0]: block has no 'type'"),
        (
            {"role": "user", "content": [{"type": "text", "text": "a", "colour": 1}]},
            "content[0]: unknown field(s) 'colour'",
        ),
        (
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "ok"},
                    {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "tool_use"}]},
                ],
            },
            "content[1].content[0]: unknown block type 'tool_use' here (expected one of 'text', "
            "'image')",
        ),
        (
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "n", "input": ["x"]}],
            },
            "content[0].input: expected a JSON object (dict), got list",
        ),
        ("hello", "expected a mapping for Message, got str"),
    ],
)
def test_malformed_plain_data_names_what_is_wrong(data: object, fragment: str) -> None:
    with pytest.raises(CodecError) as info:
        codec.from_plain(data, Message)
    assert str(info.value).startswith("malformed Message: ")
    assert fragment in str(info.value)


def test_every_bad_value_is_reported_at_once() -> None:
    data = {"role": "user", "content": [{"type": "text", "text": 1}, {"type": "image"}]}
    with pytest.raises(CodecError) as info:
        codec.from_plain(data, Message)
    text = str(info.value)
    assert "content[0].text: expected str, got int" in text
    assert "content[1].media_type: required field missing" in text


def test_strict_scalars_do_not_coerce() -> None:
    with pytest.raises(CodecError, match=r"input_tokens: expected int, got bool"):
        codec.from_plain({"input_tokens": True}, Usage)
    with pytest.raises(CodecError, match=r"output_tokens: expected int, got str"):
        codec.from_plain({"output_tokens": "3"}, Usage)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"x": (1, 2)}, "tuple is not JSON data (use a list) at input['x']"),
        ({"x": {1: "a"}}, "key 1 is not a str at input['x']"),
        ({"x": [float("nan")]}, "nan is not JSON data (not finite) at input['x'][0]"),
        ({"x": b"raw"}, "bytes is not JSON data at input['x']"),
    ],
)
def test_tool_input_must_be_json_data(value: dict[str, Any], fragment: str) -> None:
    block = ToolUseBlock("t", "n", value)
    with pytest.raises(CodecError) as info:
        codec.pack(block)
    assert fragment in str(info.value)


def test_unpackable_values_fail_clearly() -> None:
    with pytest.raises(CodecError, match="cannot pack TextBlock: UnicodeEncodeError"):
        codec.pack(TextBlock("\ud800"))
    with pytest.raises(CodecError, match="cannot pack ToolUseBlock: OverflowError"):
        codec.pack(ToolUseBlock("t", "n", {"big": 2**70}))


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"\xc1", "not valid msgpack (FormatError"),
        (b"\x92\x01", "not valid msgpack"),
        (msgpack.packb([1]) + b"\x01", "not valid msgpack (ExtraData"),
        (
            msgpack.packb({"role": "user", "content": [{"type": "text", "text": b"x"}]}),
            "expected str",
        ),
        ("not bytes", "expected bytes, got str"),
    ],
)
def test_malformed_bytes_fail_clearly(data: Any, fragment: str) -> None:
    with pytest.raises(CodecError) as info:
        codec.unpack(data, Message)
    assert str(info.value).startswith("cannot unpack Message") or "malformed Message" in str(
        info.value
    )
    assert fragment in str(info.value)


def test_malformed_json_fails_clearly() -> None:
    with pytest.raises(CodecError, match="cannot read Usage: not valid JSON"):
        codec.from_json("{", Usage)
    with pytest.raises(CodecError, match=r"ToolUseBlock: inf is not JSON data \(not finite\)"):
        codec.to_json(ToolUseBlock("t", "n", {"x": float("inf")}))
