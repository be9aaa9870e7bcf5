"""Pruning: large old tool outputs replaced by a one-line placeholder, no model call.

Only the middle is pruned: the tail (from ``protect_from``) is recent work the
model still needs verbatim, and the head (``head_end``) is kept byte-identical
so the cached prompt prefix (system prompt + first messages) stays valid.
Tool_use blocks, ids, ``is_error`` and ``cache`` flags are never touched.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hermes.compression.boundaries import head_end
from hermes.compression.render import tool_names
from hermes.compression.settings import CompressionSettings
from hermes.compression.tokens import result_chars
from hermes.model.types import ContentBlock, ImageBlock, Message, TextBlock, ToolResultBlock


@attrs.frozen(slots=True)
class PruneResult:
    messages: tuple[Message, ...]
    pruned_count: int
    saved_chars: int


def placeholder(block: ToolResultBlock, tool_name: str) -> str:
    """The text standing in for a pruned tool result."""
    if isinstance(block.content, str):
        chars, images = len(block.content), 0
    else:
        chars = sum(len(b.text) for b in block.content if isinstance(b, TextBlock))
        images = sum(1 for b in block.content if isinstance(b, ImageBlock))
    what = f"{chars:,} characters"
    if images:
        what += f" and {images} image{'s' if images > 1 else ''}"
    return (
        f"[Old tool output pruned to save context: {what} from {tool_name} "
        f"(call {block.tool_use_id}).]"
    )


def prune_tool_results(
    messages: Sequence[Message], protect_from: int, settings: CompressionSettings
) -> PruneResult:
    """Replace tool results over ``prune_min_chars`` between the head and ``protect_from``."""
    out = list(messages)
    start = head_end(messages, settings.protect_first)
    stop = min(max(protect_from, 0), len(out))
    names = tool_names(out[:stop])
    pruned = saved = 0
    for index in range(start, stop):
        message = out[index]
        if message.role != "user":
            continue
        changed = False
        content: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                size = result_chars(block.content)
                if size > settings.prune_min_chars:
                    name = names.get(block.tool_use_id, "unknown tool")
                    text = placeholder(block, name)
                    block = attrs.evolve(block, content=text)
                    pruned += 1
                    saved += size - len(text)
                    changed = True
            content.append(block)
        if changed:
            out[index] = attrs.evolve(message, content=tuple(content))
    return PruneResult(tuple(out), pruned, saved)
