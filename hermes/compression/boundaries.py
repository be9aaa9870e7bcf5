"""Where to cut: a protected head, a middle to summarise, a protected tail.

No cut separates a tool_use from its tool_result: the head never ends on an
assistant message with tool uses, and the tail never starts on a user message
holding tool results.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hermes.compression.settings import CompressionSettings
from hermes.compression.tokens import message_tokens
from hermes.model.types import Message, ToolResultBlock, ToolUseBlock


@attrs.frozen(slots=True)
class Split:
    """``head + middle + tail`` is the transcript; ``middle`` is never empty."""

    head: tuple[Message, ...]
    middle: tuple[Message, ...]
    tail: tuple[Message, ...]

    @property
    def head_end(self) -> int:
        """Index of the first middle message."""
        return len(self.head)

    @property
    def tail_start(self) -> int:
        """Index of the first tail message."""
        return len(self.head) + len(self.middle)


def has_tool_uses(message: Message) -> bool:
    return message.role == "assistant" and any(isinstance(b, ToolUseBlock) for b in message.content)


def has_tool_results(message: Message) -> bool:
    return message.role == "user" and any(isinstance(b, ToolResultBlock) for b in message.content)


def head_end(messages: Sequence[Message], protect_first: int) -> int:
    """End of the head: ``protect_first`` messages, plus the results of a trailing tool_use."""
    end = min(protect_first, len(messages))
    if 0 < end < len(messages) and has_tool_uses(messages[end - 1]):
        end += 1
    return end


def tail_start(messages: Sequence[Message], protect_last: int, budget_tokens: int) -> int:
    """Start of the tail: as many recent messages as fit the budget, at least
    ``protect_last``, moved earlier so it never starts on tool results."""
    n = len(messages)
    start = max(n - protect_last, 0)
    used = sum(message_tokens(m) for m in messages[start:])
    while start > 0:
        cost = message_tokens(messages[start - 1])
        if used + cost > budget_tokens:
            break
        used += cost
        start -= 1
    if 0 < start < n and has_tool_results(messages[start]):
        start -= 1
    return start


def split(
    messages: Sequence[Message], settings: CompressionSettings, tail_budget_tokens: int
) -> Split | None:
    """Cut ``messages`` into head / middle / tail; None when the middle would be empty."""
    head = head_end(messages, settings.protect_first)
    tail = tail_start(messages, settings.protect_last, tail_budget_tokens)
    if tail <= head:
        return None
    items = tuple(messages)
    return Split(items[:head], items[head:tail], items[tail:])
