"""Putting head, summary and tail back together as a transcript the store accepts.

Placement of the summary block, by the head's last role and the tail's first:

- head ends with assistant (or no head), tail starts with assistant: its own user message;
- head ends with user, tail starts with user: its own assistant message;
- head ends with user, tail starts with assistant (or no tail): appended to the head's
  last user message (after any tool results);
- head ends with assistant (or no head), tail starts with user: put first in the tail's
  first user message, after any tool results.

Roles keep alternating and no tool_use/tool_result pair is touched. The
assistant side is never edited: its thinking blocks must stay first.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hermes.compression.marker import summary_block_text
from hermes.model.types import Message, Role, TextBlock, ToolResultBlock, ToolUseBlock
from hermes.store.validate import Tail, TranscriptRuleError, advance


def _with_text(message: Message, block: TextBlock, *, first: bool) -> Message:
    """A user message with ``block`` added after its tool results (first or last)."""
    content = list(message.content)
    results_end = 0
    for index, item in enumerate(content):
        if isinstance(item, ToolResultBlock):
            results_end = index + 1
    at = results_end if first else len(content)
    content.insert(at, block)
    return attrs.evolve(message, content=tuple(content))


def assemble(
    head: Sequence[Message], summary_text: str, tail: Sequence[Message], method: str
) -> tuple[Message, ...]:
    """``head``, the summary (marked, naming ``method``), ``tail``: roles alternating."""
    block = TextBlock(summary_block_text(summary_text, method))
    head_role: Role = head[-1].role if head else "assistant"
    tail_role: Role = tail[0].role if tail else "assistant"
    if head_role != tail_role:
        if head_role == "user":
            return (*head[:-1], _with_text(head[-1], block, first=False), *tail)
        return (*head, _with_text(tail[0], block, first=True), *tail[1:])
    role: Role = "assistant" if head_role == "user" else "user"
    return (*head, Message(role, (block,)), *tail)


def validate_transcript(messages: Sequence[Message]) -> list[str]:
    """Problems found (empty when valid): the store's rules (``hermes.store.validate``),
    plus unique tool_use ids and tool results first in their user message."""
    problems: list[str] = []
    tail = Tail.empty()
    seen: set[str] = set()
    for seq, message in enumerate(messages):
        try:
            tail = advance(tail, message)
        except TranscriptRuleError as exc:
            problems.append(str(exc))
            break
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                if block.id in seen:
                    problems.append(f"message seq {seq}: tool_use id {block.id!r} used before")
                seen.add(block.id)
        other_seen = False
        for block in message.content:
            if not isinstance(block, ToolResultBlock):
                other_seen = True
            elif other_seen:
                problems.append(f"message seq {seq}: a tool_result comes after other content")
                break
    return problems
