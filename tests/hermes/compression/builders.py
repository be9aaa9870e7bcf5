"""Small builders for valid transcripts in the compression tests."""

from __future__ import annotations

from typing import Any

from hermes.model.types import (
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)


def user(text: str) -> Message:
    return Message.user(text)


def assistant(text: str = "", *uses: ToolUseBlock, thinking: bool = False) -> Message:
    content: list[ContentBlock] = []
    if thinking:
        content.append(ThinkingBlock("let me think", "sig"))
    if text:
        content.append(TextBlock(text))
    content.extend(uses)
    return Message("assistant", tuple(content))


def use(id_: str, name: str = "read_file", **tool_input: Any) -> ToolUseBlock:
    return ToolUseBlock(id_, name, dict(tool_input))


def results(*blocks: ToolResultBlock, text: str = "") -> Message:
    content: list[ContentBlock] = list(blocks)
    if text:
        content.append(TextBlock(text))
    return Message("user", tuple(content))


def result(id_: str, content: str = "ok", *, error: bool = False) -> ToolResultBlock:
    return ToolResultBlock(id_, content, is_error=error)


def tool_step(
    id_: str, name: str = "read_file", output: str = "ok", **tool_input: Any
) -> list[Message]:
    """An assistant message with one tool call and the user message with its result."""
    return [assistant("", use(id_, name, **tool_input)), results(result(id_, output))]


def session(turns: int, steps: int = 2, output_chars: int = 100) -> list[Message]:
    """``turns`` turns of: prompt, ``steps`` tool calls (read_file), a final answer."""
    out: list[Message] = []
    n = 0
    for t in range(turns):
        out.append(user(f"request {t}"))
        for _ in range(steps):
            n += 1
            out += tool_step(f"toolu_{n:04d}", "read_file", "x" * output_chars, path=f"f{n}.py")
        out.append(assistant(f"answer {t}"))
    return out


def pairs_intact(parts: list[tuple[Message, ...]]) -> bool:
    """No tool_use in one part has its tool_result in another."""
    owner: dict[str, int] = {}
    for index, part in enumerate(parts):
        for message in part:
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    owner[block.id] = index
    for index, part in enumerate(parts):
        for message in part:
            for block in message.content:
                if isinstance(block, ToolResultBlock) and owner.get(block.tool_use_id) != index:
                    return False
    return True
