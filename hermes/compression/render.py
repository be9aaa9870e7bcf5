"""Messages as a short readable transcript, for the summary prompt and the static summary."""

from __future__ import annotations

from collections.abc import Sequence

from hermes.compression.marker import is_summary_block
from hermes.compression.tokens import json_text
from hermes.model.types import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)

USER_CHARS = 3_000
ASSISTANT_CHARS = 2_000
ARGS_CHARS = 300
RESULT_CHARS = 800


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, keeping its start and end."""
    if len(text) <= limit:
        return text
    room = limit - len(f" …[{len(text):,} chars omitted]… ")
    if room < 20:
        return text[: max(limit - 1, 0)] + "…"
    note = f" …[{len(text) - room:,} chars omitted]… "
    front = room * 2 // 3
    return text[:front] + note + text[len(text) - (room - front) :]


def result_text(block: ToolResultBlock) -> str:
    """A tool result's text, images shown as ``[image]``."""
    if isinstance(block.content, str):
        return block.content
    return "\n".join(b.text if isinstance(b, TextBlock) else "[image]" for b in block.content)


def tool_names(messages: Sequence[Message]) -> dict[str, str]:
    """tool_use id -> tool name, over ``messages``."""
    return {b.id: b.name for m in messages for b in m.content if isinstance(b, ToolUseBlock)}


def render_transcript(messages: Sequence[Message]) -> str:
    """One line group per block; thinking and summary blocks left out."""
    names = tool_names(messages)
    lines: list[str] = []
    for message in messages:
        role = message.role
        for block in message.content:
            if isinstance(block, TextBlock):
                if is_summary_block(block) or not block.text.strip():
                    continue
                limit = USER_CHARS if role == "user" else ASSISTANT_CHARS
                lines.append(f"[{role}] {shorten(block.text.strip(), limit)}")
            elif isinstance(block, ImageBlock):
                lines.append(f"[{role}] [image]")
            elif isinstance(block, ToolUseBlock):
                args = shorten(json_text(block.input), ARGS_CHARS)
                lines.append(f"[assistant called {block.name} ({block.id})] {args}")
            elif isinstance(block, ToolResultBlock):
                name = names.get(block.tool_use_id, "unknown tool")
                status = "error" if block.is_error else "ok"
                body = shorten(result_text(block).strip(), RESULT_CHARS)
                lines.append(f"[result of {name} ({block.tool_use_id}), {status}] {body}")
    return "\n".join(lines)
