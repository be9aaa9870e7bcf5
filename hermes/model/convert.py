"""Conversion between our transcript types and the Messages API wire shapes.

Requests go out as the JSON body the SDK would send for the same params
(``request_body``; ``request_params`` gives the params as plain dicts); stream
events come in as the JSON objects the SDK decoded from the SSE stream and are
turned into ours by ``StreamAssembler``. No other module touches wire shapes.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
from typing import Any

from hermes.text import valid_data, valid_text

from .errors import FailureReason, StreamProblem
from .types import (
    ContentBlock,
    Message,
    ModelEvent,
    ModelRequest,
    ModelResponse,
    RedactedThinkingBlock,
    SignatureDelta,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolInputDelta,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ToolUseComplete,
    ToolUseStart,
    Usage,
)

_EPHEMERAL = {"type": "ephemeral"}


def block_to_wire(block: ContentBlock, cache: bool = False) -> dict[str, Any]:
    """One content block as API JSON; ``cache`` adds a cache breakpoint."""
    out: dict[str, Any]
    if isinstance(block, TextBlock):
        out = {"type": "text", "text": block.text}
        cache = cache or block.cache
    elif isinstance(block, ToolUseBlock):
        out = {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    elif isinstance(block, ToolResultBlock):
        content: Any = (
            block.content
            if isinstance(block.content, str)
            else [block_to_wire(b) for b in block.content]
        )
        out = {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": content}
        if block.is_error:
            out["is_error"] = True
        cache = cache or block.cache
    elif isinstance(block, ThinkingBlock):
        out = {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    elif isinstance(block, RedactedThinkingBlock):
        out = {"type": "redacted_thinking", "data": block.data}
    else:
        out = {
            "type": "image",
            "source": {"type": "base64", "media_type": block.media_type, "data": block.data},
        }
    if cache:
        out["cache_control"] = _EPHEMERAL
    return out


def _cacheable(block: ContentBlock) -> bool:
    # Thinking blocks cannot carry cache_control.
    return not isinstance(block, ThinkingBlock | RedactedThinkingBlock)


def request_params(request: ModelRequest, model: str) -> dict[str, Any]:
    """Keyword arguments for ``messages.create`` (without ``stream``).

    Cache breakpoints: every system block marked ``cache`` (the stable tiers),
    and the last cacheable block of the conversation when ``cache_conversation``,
    so that the prefix a session re-sends each turn is read from cache.
    """
    params = _options(request, model)
    mark = _conversation_mark(request)
    last = len(request.messages) - 1
    params["messages"] = [
        _message_wire(m, mark if i == last else -1) for i, m in enumerate(request.messages)
    ]
    if request.system:
        params["system"] = _system_wire(request.system)
    if request.tools:
        params["tools"] = _tools_wire(request.tools)
    return params


def _options(request: ModelRequest, model: str) -> dict[str, Any]:
    """The parameters besides the messages, the system prompt and the tools."""
    params: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens}
    if request.tool_choice is not None:
        params["tool_choice"] = {"type": request.tool_choice}
    if request.thinking_budget is not None:
        params["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
    if request.stop_sequences:
        params["stop_sequences"] = list(request.stop_sequences)
    if request.temperature is not None:
        # No keyword of ``messages.create`` since SDK 1.0: the SDK merges ``extra_body``
        # into the JSON after its own fields.
        params["extra_body"] = {"temperature": request.temperature}
    return params


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""Encodes as the SDK's own body encoder does (``anthropic._utils._json``): same bytes."""


def _dumps(value: Any) -> bytes:
    return _ENCODER.encode(value).encode()


def _message_wire(message: Message, mark: int = -1) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": [block_to_wire(b, cache=(j == mark)) for j, b in enumerate(message.content)],
    }


class _Encoded(weakref.ref[Message]):
    """A cache entry: a weak reference to the message, carrying its JSON."""

    __slots__ = ("chars", "data", "key")

    def __new__(
        cls, message: Message, callback: Callable[[_Encoded], None], key: int, data: bytes
    ) -> _Encoded:
        return super().__new__(cls, message, callback)

    def __init__(
        self, message: Message, callback: Callable[[_Encoded], None], key: int, data: bytes
    ) -> None:
        self.key = key
        self.data = data
        self.chars = -1
        """``message_chars`` of the message, once asked for (-1: not yet)."""


PARTS_KEPT = 64
"""System prompts and tool sets whose JSON ``WireCache.encoded`` keeps (oldest dropped)."""


class WireCache:
    """Each transcript message's JSON, encoded once and reused while the message lives.

    A session re-sends its whole history with every request. Built as fresh
    dicts per request (then copied again by the SDK), the history of 100
    streaming sessions was ~8k short-lived containers per copy alive at any
    moment, all traversed by every young collection of the daemon (pauses of
    50-100 ms in bench gateway). Encoded bytes are not tracked by the collector
    at all; an entry is one tracked object (the weak reference). Keyed by
    identity (messages hold dicts, so they are not hashable); an entry goes
    when its message is freed.
    """

    def __init__(self) -> None:
        self._entries: dict[int, _Encoded] = {}
        self._parts: dict[int, tuple[tuple[Any, ...], bytes]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def message(self, message: Message) -> bytes:
        """``message`` as API JSON (without cache breakpoints of its own)."""
        key = id(message)
        entry = self._entries.get(key)
        if entry is not None and entry() is message:
            return entry.data
        data = _dumps(_message_wire(message))
        self._entries[key] = _Encoded(message, self._forget, key, data)
        return data

    def chars(self, message: Message) -> int:
        """``message_chars(message)``, counted once for a message the cache holds."""
        entry = self._entries.get(id(message))
        if entry is None or entry() is not message:
            return message_chars(message)
        if entry.chars < 0:
            entry.chars = message_chars(message)
        return entry.chars

    def encoded(self, key: tuple[Any, ...], wire: Callable[[Any], Any]) -> bytes:
        """``wire(key)`` as JSON, reused while the same tuple comes back (a session's
        system prompt and tool specs are the same objects request after request)."""
        found = self._parts.get(id(key))
        if found is not None and found[0] is key:
            return found[1]
        data = _dumps(wire(key))
        self._parts[id(key)] = (key, data)  # holding ``key`` keeps its id from being reused
        while len(self._parts) > PARTS_KEPT:
            del self._parts[next(iter(self._parts))]
        return data

    def _forget(self, entry: _Encoded) -> None:
        if self._entries.get(entry.key) is entry:
            del self._entries[entry.key]


def _conversation_mark(request: ModelRequest) -> int:
    """Index of the last message's block that gets the conversation breakpoint (-1: none)."""
    if not request.cache_conversation or not request.messages:
        return -1
    blocks = request.messages[-1].content
    for j in range(len(blocks) - 1, -1, -1):
        if _cacheable(blocks[j]):
            return j
    return -1


def request_body(request: ModelRequest, model: str, cache: WireCache) -> bytes:
    """The streaming ``messages.create`` body for ``request``, byte for byte what the
    SDK sends for ``request_params(request, model)`` plus ``stream=True``.

    Messages come from ``cache``, except the last one when it carries the
    conversation's cache breakpoint (it changes with every request anyway); so
    do the system prompt and the tools (a session sends the same ones each time).
    """
    params = _options(request, model)
    messages = request.messages
    mark = _conversation_mark(request)
    history = messages[:-1] if mark >= 0 else messages
    encoded = [cache.message(m) for m in history]
    if mark >= 0:
        encoded.append(_dumps(_message_wire(messages[-1], mark)))
    parts = [b'{"max_tokens":', _dumps(params.pop("max_tokens")), b',"messages":[']
    parts.append(b",".join(encoded))
    parts.append(b"]")
    params["stream"] = True
    extra = params.pop("extra_body", {})
    if request.system:
        params["system"] = cache.encoded(request.system, _system_wire)
    if request.tools:
        params["tools"] = cache.encoded(request.tools, _tools_wire)
    # The SDK's key order (the order of ``messages.create``'s keyword arguments).
    for key in ("model", "stop_sequences", "stream", "system", "thinking", "tool_choice", "tools"):
        if key in params:
            value = params[key]
            parts.append(b',"' + key.encode() + b'":')
            parts.append(value if isinstance(value, bytes) else _dumps(value))
    for key, value in extra.items():  # after the SDK's own fields, as it merges them
        parts.append(b"," + _dumps(key) + b":" + _dumps(value))
    parts.append(b"}")
    return b"".join(parts)


def _system_wire(system: tuple[TextBlock, ...]) -> list[dict[str, Any]]:
    return [block_to_wire(b) for b in system]


def _tools_wire(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in tools
    ]


def estimate_tokens(request: ModelRequest, cache: WireCache | None = None) -> int:
    """A rough prompt size (4 characters a token) for timeouts before the first reply.

    With ``cache``, each message the cache holds is counted once, not at every
    request of its session (the whole history is re-sent each time).
    """
    chars = sum(len(b.text) for b in request.system)
    count = message_chars if cache is None else cache.chars
    for message in request.messages:
        chars += count(message)
    return chars // 4


def message_chars(message: Message) -> int:
    """The characters ``estimate_tokens`` counts for one message."""
    chars = 0
    for block in message.content:
        if isinstance(block, TextBlock):
            chars += len(block.text)
        elif isinstance(block, ToolResultBlock):
            chars += len(block.content) if isinstance(block.content, str) else 200
        elif isinstance(block, ToolUseBlock):
            chars += len(json.dumps(block.input))
    return chars


def _usage(raw: Any, base: Usage | None = None) -> Usage:
    """Usage from a stream event's ``usage`` object; fields it lacks keep ``base``'s values."""
    base = base or Usage()
    raw = raw if isinstance(raw, dict) else {}

    def field(name: str, default: int) -> int:
        value = raw.get(name)
        return int(value) if value is not None else default

    return Usage(
        input_tokens=field("input_tokens", base.input_tokens),
        output_tokens=field("output_tokens", base.output_tokens),
        cache_creation_input_tokens=field(
            "cache_creation_input_tokens", base.cache_creation_input_tokens
        ),
        cache_read_input_tokens=field("cache_read_input_tokens", base.cache_read_input_tokens),
    )


class StreamAssembler:
    """Turns raw stream events into our events and the final ``ModelResponse``.

    A raw event is the event's JSON object as the SDK decoded it from the SSE
    stream (``AsyncStream[object]``: the SDK's own pydantic event models cost
    about 5% of a busy daemon's CPU and nothing here needs them). ``feed``
    returns the events to publish for one raw event; ``finish`` checks the
    stream's contract (it ended with ``message_stop``) and returns the response.
    Broken contracts and malformed events raise ``StreamProblem``.

    Tool arguments that are not a JSON object raise too (at the end), unless
    ``lenient_tool_input`` or the reply was cut at the output limit
    (``max_tokens``: the caller retries it with a larger budget): then the block
    gets ``{}`` and the problem is listed in the response's ``malformed_inputs``.
    """

    def __init__(self, *, lenient_tool_input: bool = False) -> None:
        self.lenient_tool_input = lenient_tool_input
        self.malformed: dict[str, str] = {}
        self.id = ""
        self.model = ""
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.stopped = False
        self._blocks: dict[int, ContentBlock] = {}
        self._parts: dict[int, list[str]] = {}
        self._kinds: dict[int, tuple[str, ...]] = {}
        self._unusable: list[StreamProblem] = []

    def feed(self, event: Any) -> list[ModelEvent]:
        try:
            return self._feed(event)
        except (KeyError, TypeError, AttributeError) as exc:
            kind = event.get("type") if isinstance(event, dict) else type(event).__name__
            raise StreamProblem(
                FailureReason.MALFORMED_OUTPUT,
                f"malformed {kind!r} stream event ({type(exc).__name__}: {exc}): "
                f"{str(event)[:200]}",
            ) from None

    def _feed(self, event: dict[str, Any]) -> list[ModelEvent]:
        kind = event["type"]
        if kind == "content_block_delta":
            return self._delta(event["index"], event["delta"])
        if kind == "content_block_start":
            return self._start(event["index"], event["content_block"])
        if kind == "content_block_stop":
            return self._stop(event["index"])
        if kind == "message_start":
            message = event["message"]
            self.id, self.model = message["id"], message["model"]
            self.usage = _usage(message.get("usage"))
        elif kind == "message_delta":
            delta = event["delta"]
            self.stop_reason = delta.get("stop_reason")
            self.stop_sequence = delta.get("stop_sequence")
            self.usage = _usage(event.get("usage"), self.usage)  # cumulative: overwrite
        elif kind == "message_stop":
            self.stopped = True
        return []  # ping and unknown events carry nothing for us

    def _start(self, index: int, block: dict[str, Any]) -> list[ModelEvent]:
        kind = block["type"]
        self._parts[index] = []
        if kind == "text":
            self._kinds[index] = ("text",)
            if block.get("text"):
                self._parts[index].append(valid_text(block["text"]))
            return []
        if kind == "tool_use":
            self._kinds[index] = ("tool_use", block["id"], block["name"])
            return [ToolUseStart(index, block["id"], block["name"])]
        if kind == "thinking":
            self._kinds[index] = ("thinking",)
            self._parts[index].append(valid_text(block.get("thinking") or ""))
            self._blocks[index] = ThinkingBlock("", block.get("signature") or "")
            return []
        if kind == "redacted_thinking":
            self._kinds[index] = ("redacted",)
            self._blocks[index] = RedactedThinkingBlock(block["data"])
            return []
        self._kinds[index] = ("other",)
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[ModelEvent]:
        kind = delta["type"]
        parts = self._parts.get(index)
        if parts is None:
            raise StreamProblem(
                FailureReason.STREAM_TRUNCATED, f"delta for block {index} before its start"
            )
        if kind == "text_delta":
            text = valid_text(delta["text"])
            parts.append(text)
            return [TextDelta(index, text)]
        if kind == "input_json_delta":
            fragment = delta["partial_json"]
            parts.append(fragment)
            return [ToolInputDelta(index, fragment)]
        if kind == "thinking_delta":
            thinking = valid_text(delta["thinking"])
            parts.append(thinking)
            return [ThinkingDelta(index, thinking)]
        if kind == "signature_delta":
            current = self._blocks.get(index)
            signature = current.signature if isinstance(current, ThinkingBlock) else ""
            self._blocks[index] = ThinkingBlock("", signature + delta["signature"])
            return [SignatureDelta(index, delta["signature"])]
        return []

    def _stop(self, index: int) -> list[ModelEvent]:
        kind = self._kinds.get(index, ("other",))
        text = "".join(self._parts.get(index, ()))
        if kind[0] == "text":
            self._blocks[index] = TextBlock(text)
        elif kind[0] == "thinking":
            previous = self._blocks.get(index)
            signature = previous.signature if isinstance(previous, ThinkingBlock) else ""
            self._blocks[index] = ThinkingBlock(text, signature)
        elif kind[0] == "tool_use":
            try:
                arguments = parse_tool_input(kind[2], text)
            except StreamProblem as problem:
                # Judged in ``finish``: a call cut at the output limit is no model error.
                self._unusable.append(problem)
                self.malformed[kind[1]] = str(problem)
                self._blocks[index] = ToolUseBlock(kind[1], kind[2], {})
                return []
            block = ToolUseBlock(kind[1], kind[2], arguments)
            self._blocks[index] = block
            return [ToolUseComplete(index, block)]
        return []

    def finish(self, attempts: int) -> ModelResponse:
        """The complete response; raises if the stream did not end properly."""
        if not self.stopped:
            raise StreamProblem(
                FailureReason.STREAM_TRUNCATED,
                f"stream ended without message_stop after {len(self._blocks)} block(s)",
            )
        if self.stop_reason is None:
            raise StreamProblem(FailureReason.STREAM_TRUNCATED, "message_stop without stop_reason")
        if self._unusable and not self.lenient_tool_input and self.stop_reason != "max_tokens":
            raise self._unusable[0]
        content = tuple(self._blocks[i] for i in sorted(self._blocks))
        return ModelResponse(
            id=self.id,
            model=self.model,
            message=Message("assistant", content),
            stop_reason=self.stop_reason,
            stop_sequence=self.stop_sequence,
            usage=self.usage,
            attempts=attempts,
            malformed_inputs=dict(self.malformed),
        )


def parse_tool_input(name: str, raw: str) -> dict[str, Any]:
    """The JSON object a tool call's ``input_json_delta`` fragments add up to."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise StreamProblem(
            FailureReason.MALFORMED_OUTPUT,
            f"tool {name!r} arguments are not valid JSON ({exc}): {raw[:200]!r}",
        ) from None
    if not isinstance(value, dict):
        raise StreamProblem(
            FailureReason.MALFORMED_OUTPUT,
            f"tool {name!r} arguments must be a JSON object, got {type(value).__name__}",
        )
    clean: dict[str, Any] = valid_data(value)  # a "\\ud800" escape decodes to a lone surrogate
    return clean
