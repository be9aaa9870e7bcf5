"""Rough token estimates, and a meter anchored on the model's real prompt counts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from hermes.compression.settings import CHARS_PER_TOKEN
from hermes.model.types import (
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

IMAGE_CHARS = 1_600 * CHARS_PER_TOKEN
"""An image weighs about 1,600 tokens whatever its base64 length."""
BLOCK_OVERHEAD = 16
"""JSON framing of one block (type tag, keys, quotes)."""
MESSAGE_OVERHEAD = 16


def json_text(value: Any) -> str:
    """Compact JSON of a tool input (anything not serialisable goes through ``str``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def result_chars(content: str | tuple[TextBlock | ImageBlock, ...]) -> int:
    """Size of a tool result's content, an image counted as ``IMAGE_CHARS``."""
    if isinstance(content, str):
        return len(content)
    return sum(len(b.text) if isinstance(b, TextBlock) else IMAGE_CHARS for b in content)


def block_chars(block: ContentBlock) -> int:
    """Characters a block costs in the request, framing included."""
    if isinstance(block, TextBlock):
        size = len(block.text)
    elif isinstance(block, ToolUseBlock):
        size = len(block.id) + len(block.name) + len(json_text(block.input))
    elif isinstance(block, ToolResultBlock):
        size = len(block.tool_use_id) + result_chars(block.content)
    elif isinstance(block, ThinkingBlock):
        size = len(block.thinking)
    elif isinstance(block, RedactedThinkingBlock):
        size = len(block.data)
    else:
        size = IMAGE_CHARS
    return size + BLOCK_OVERHEAD


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def message_tokens(message: Message) -> int:
    """Estimated tokens of one message."""
    return _tokens(MESSAGE_OVERHEAD + sum(block_chars(b) for b in message.content))


def estimate_tokens(
    messages: Sequence[Message],
    system: Sequence[TextBlock] | str = (),
    tools: Sequence[ToolSpec] = (),
) -> int:
    """Estimated prompt tokens (~4 chars/token); additive over messages, deterministic."""
    total = sum(message_tokens(m) for m in messages)
    if isinstance(system, str):
        total += _tokens(len(system))
    else:
        total += _tokens(sum(len(b.text) + BLOCK_OVERHEAD for b in system))
    for tool in tools:
        total += _tokens(len(tool.name) + len(tool.description) + len(json_text(tool.input_schema)))
    return total


@attrs.define
class ContextMeter:
    """The current prompt size: the last real count plus estimates of what came since.

    ``observe`` takes a reply's usage and the transcript length *including* that
    reply. Until the first reply (or after ``reset``, or when the transcript got
    shorter than the anchor) everything is estimated.
    """

    real_tokens: int | None = None
    at_length: int = 0

    def observe(self, usage: Usage, length: int) -> None:
        """Anchor on a reply: its prompt tokens plus its own output tokens."""
        if length < 0:
            raise ValueError(f"length must be >= 0, got {length}")
        self.real_tokens = usage.prompt_tokens + usage.output_tokens
        self.at_length = length

    def reset(self) -> None:
        """Forget the anchor: the transcript was rewritten (compaction, rollback)."""
        self.real_tokens = None
        self.at_length = 0

    def estimate(
        self,
        messages: Sequence[Message],
        system: Sequence[TextBlock] | str = (),
        tools: Sequence[ToolSpec] = (),
    ) -> int:
        """The current prompt size in tokens (system and tools count only when unanchored)."""
        if self.real_tokens is None or self.at_length > len(messages):
            return estimate_tokens(messages, system, tools)
        return self.real_tokens + estimate_tokens(messages[self.at_length :])
