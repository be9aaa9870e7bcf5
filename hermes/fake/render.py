"""Turn a scripted ``Reply`` into wire bytes: one JSON message, or the list of SSE events."""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring as _encode_str
from json.encoder import encode_basestring_ascii as _encode_ascii
from typing import Any

from . import wire
from .caching import estimate_tokens
from .script import RedactedThinking, Reply, Text, Thinking, ToolUse, Usage


class Rendering:
    """Per-request values a reply is rendered with (ids, model, estimated input usage)."""

    __slots__ = ("cache_creation", "cache_read", "input_tokens", "message_id", "model", "tool_id")

    def __init__(
        self,
        model: str,
        message_id: str,
        tool_id: Callable[[], str],
        input_usage: tuple[int, int, int],
    ) -> None:
        self.model = model
        self.message_id = message_id
        self.tool_id = tool_id
        self.input_tokens, self.cache_creation, self.cache_read = input_usage


def _output_estimate(reply: Reply) -> int:
    n = 0
    for b in reply.content:
        if isinstance(b, Text):
            n += len(b.text)
        elif isinstance(b, Thinking):
            n += len(b.thinking)
        elif isinstance(b, ToolUse):
            n += len(json.dumps(b.input_dict())) + len(b.name)
        else:
            n += 16
    return estimate_tokens(n)


def _usage(reply: Reply, ctx: Rendering) -> dict[str, Any]:
    """The final usage dict: scripted values where given, estimates elsewhere."""
    u = reply.usage or Usage()
    usage: dict[str, Any] = {
        "input_tokens": ctx.input_tokens if u.input_tokens is None else u.input_tokens,
        "cache_creation_input_tokens": (
            ctx.cache_creation
            if u.cache_creation_input_tokens is None
            else u.cache_creation_input_tokens
        ),
        "cache_read_input_tokens": (
            ctx.cache_read if u.cache_read_input_tokens is None else u.cache_read_input_tokens
        ),
        "output_tokens": _output_estimate(reply) if u.output_tokens is None else u.output_tokens,
    }
    if u.service_tier is not None:
        usage["service_tier"] = u.service_tier
    return usage


def _tool_ids(reply: Reply, ctx: Rendering) -> list[str]:
    return [b.id or ctx.tool_id() for b in reply.content if isinstance(b, ToolUse)]


def _block_json(block: Any, tool_id: str | None) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinking):
        return {"type": "redacted_thinking", "data": block.data}
    assert isinstance(block, ToolUse)
    return {"type": "tool_use", "id": tool_id, "name": block.name, "input": block.input_dict()}


def _message(reply: Reply, ctx: Rendering, content: list[dict[str, Any]]) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "id": reply.message_id or ctx.message_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model or ctx.model,
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
    }
    return msg


def message_json(reply: Reply, ctx: Rendering) -> bytes:
    """The non-streaming response body."""
    ids = iter(_tool_ids(reply, ctx))
    content = [_block_json(b, next(ids) if isinstance(b, ToolUse) else None) for b in reply.content]
    msg = _message(reply, ctx, content)
    msg["stop_reason"] = reply.effective_stop_reason()
    msg["stop_sequence"] = reply.stop_sequence
    if reply.stop_details is not None:
        msg["stop_details"] = reply.stop_details
    msg["usage"] = _usage(reply, ctx)
    return wire.dumps(msg)


_DELTA = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,'
    b'"delta":{"type":"%s","%s":%s}}\n\n'
)
_STOP = b'event: content_block_stop\ndata: {"type":"content_block_stop","index":%d}\n\n'


def _delta(index: int, kind: bytes, field: bytes, value: str) -> bytes:
    """A ``content_block_delta`` event, formatted directly (the hot path of streaming)."""
    try:
        encoded = _encode_str(value).encode()
    except UnicodeEncodeError:  # a scripted lone surrogate: its JSON escape, as wire.dumps does
        encoded = _encode_ascii(value).encode()
    return _DELTA % (index, kind, field, encoded)


def block_events(reply: Reply, tool_ids: list[str]) -> list[bytes]:
    """The ``content_block_start`` / ``_delta`` / ``_stop`` events of every block.

    ``tool_ids`` has one id per ``ToolUse`` block, in order.
    """
    out: list[bytes] = []
    ids = iter(tool_ids)
    for i, block in enumerate(reply.content):
        if isinstance(block, Text):
            start: dict[str, Any] = {"type": "text", "text": ""}
        elif isinstance(block, Thinking):
            start = {"type": "thinking", "thinking": "", "signature": ""}
        elif isinstance(block, RedactedThinking):
            start = {"type": "redacted_thinking", "data": block.data}
        else:
            start = {"type": "tool_use", "id": next(ids), "name": block.name, "input": {}}
        out.append(
            wire.sse_event(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": start},
            )
        )
        if isinstance(block, Text):
            out.extend(_delta(i, b"text_delta", b"text", t) for t in block.pieces())
        elif isinstance(block, Thinking):
            out.extend(_delta(i, b"thinking_delta", b"thinking", t) for t in block.pieces())
            out.append(_delta(i, b"signature_delta", b"signature", block.signature))
        elif isinstance(block, ToolUse):
            out.extend(
                _delta(i, b"input_json_delta", b"partial_json", f) for f in block.json_fragments()
            )
        out.append(_STOP % i)
    return out


def explicit_tool_ids(reply: Reply) -> list[str]:
    """The scripted ids of the reply's ``ToolUse`` blocks (all set when ``cacheable``)."""
    return [b.id or "" for b in reply.content if isinstance(b, ToolUse)]


def cacheable(reply: Reply) -> bool:
    """Whether ``block_events`` of ``reply`` are the same on every request (no generated ids)."""
    return all(b.id is not None for b in reply.content if isinstance(b, ToolUse))


def sse_events(reply: Reply, ctx: Rendering, blocks: list[bytes] | None = None) -> list[bytes]:
    """Every SSE event of the streamed reply, in order, each one ready to write.

    ``blocks`` may be a cached ``block_events(reply, ...)`` result.
    """
    usage = _usage(reply, ctx)
    start_usage = {k: v for k, v in usage.items() if k != "output_tokens"}
    start_usage["output_tokens"] = 1
    msg = _message(reply, ctx, [])
    msg["usage"] = start_usage
    out = [wire.sse_event("message_start", {"type": "message_start", "message": msg})]
    if reply.ping:
        out.append(wire.PING)
    out.extend(blocks if blocks is not None else block_events(reply, _tool_ids(reply, ctx)))
    delta: dict[str, Any] = {
        "stop_reason": reply.effective_stop_reason(),
        "stop_sequence": reply.stop_sequence,
    }
    if reply.stop_details is not None:
        delta["stop_details"] = reply.stop_details
    final_usage = {k: v for k, v in usage.items() if k != "service_tier"}
    out.append(
        wire.sse_event(
            "message_delta", {"type": "message_delta", "delta": delta, "usage": final_usage}
        )
    )
    out.append(wire.MESSAGE_STOP)
    return out


def endless_prologue(model: str, message_id: str, input_tokens: int) -> list[bytes]:
    """``message_start``, ``ping`` and the text block start of an ``Endless`` stream."""
    msg: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
        },
    }
    return [
        wire.sse_event("message_start", {"type": "message_start", "message": msg}),
        wire.PING,
        wire.sse_event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]


def endless_delta(text: str) -> bytes:
    """One ``text_delta`` event on block 0."""
    return _delta(0, b"text_delta", b"text", text)
