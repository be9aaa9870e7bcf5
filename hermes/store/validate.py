"""The rules a stored transcript keeps, as pure functions.

The session owns the transcript; the store is the last line of defence, so
that whatever happens upstream the persisted history is one the API accepts:

- the first message is the user's, and roles alternate;
- a user message holds text, images and tool results; an assistant message
  holds text, thinking and tool uses;
- tool_use ids are unique in the session (checked against the database by
  the caller) and within a message;
- a tool_result answers a tool_use of the message just before it, at most once;
- before the next assistant message, every earlier tool_use has its result.

The last rule is checked when the next assistant message arrives, not when
the results message is first written, so the session can flush each tool
result as it lands (``replace_last`` rewrites the results message) and a crash
loses at most the step in flight. ``Transcript.open_tool_uses`` tells a
resuming session which results are missing.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from hermes.model.types import (
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

_ALLOWED: dict[str, tuple[type[ContentBlock], ...]] = {
    "user": (TextBlock, ImageBlock, ToolResultBlock),
    "assistant": (TextBlock, ThinkingBlock, RedactedThinkingBlock, ToolUseBlock),
}
_TAG = {
    TextBlock: "text",
    ImageBlock: "image",
    ToolResultBlock: "tool_result",
    ThinkingBlock: "thinking",
    RedactedThinkingBlock: "redacted_thinking",
    ToolUseBlock: "tool_use",
}


class TranscriptRuleError(ValueError):
    """A message breaks a transcript rule; the message says which and where."""


@attrs.frozen(slots=True)
class Tail:
    """What the next message must fit: the end of the transcript so far."""

    next_seq: int
    last_role: Role | None
    last_uses: frozenset[str]
    """tool_use ids of the last message (empty unless it is the assistant's)."""
    open_uses: tuple[str, ...]
    """tool_use ids anywhere before ``next_seq`` that have no result yet."""

    @classmethod
    def empty(cls) -> Tail:
        return cls(0, None, frozenset(), ())


def _ids(ids: Iterable[str]) -> str:
    return ", ".join(repr(i) for i in sorted(ids))


def advance(tail: Tail, message: Message) -> Tail:
    """Check ``message`` as the next one after ``tail``; return the new tail."""
    seq = tail.next_seq
    role = message.role
    where = f"message seq {seq} ({role})"
    if role not in _ALLOWED:
        raise TranscriptRuleError(f"{where}: unknown role {role!r}")
    if tail.last_role is None and role != "user":
        raise TranscriptRuleError(f"{where}: the first message must be the user's")
    if role == tail.last_role:
        raise TranscriptRuleError(
            f"{where}: two {role} messages in a row (seq {seq - 1} and {seq}); roles must alternate"
        )
    allowed = _ALLOWED[role]
    for index, block in enumerate(message.content):
        if not isinstance(block, allowed):
            kind = _TAG.get(type(block), type(block).__name__)
            raise TranscriptRuleError(
                f"{where}: block {index} is a {kind} block, which a {role} message cannot hold"
            )
    if role == "assistant":
        if tail.open_uses:
            raise TranscriptRuleError(
                f"{where}: tool_use id(s) {_ids(tail.open_uses)} have no tool_result; "
                "every tool_use needs its result before the next assistant message"
            )
        uses = [b.id for b in message.content if isinstance(b, ToolUseBlock)]
        duplicates = {i for i in uses if uses.count(i) > 1}
        if duplicates:
            raise TranscriptRuleError(f"{where}: tool_use id(s) {_ids(duplicates)} repeated")
        return Tail(seq + 1, role, frozenset(uses), tuple(uses))
    results = [b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)]
    duplicates = {i for i in results if results.count(i) > 1}
    if duplicates:
        raise TranscriptRuleError(
            f"{where}: more than one tool_result for tool_use id(s) {_ids(duplicates)}"
        )
    stray = [i for i in results if i not in tail.last_uses]
    if stray:
        raise TranscriptRuleError(
            f"{where}: tool_result for {_ids(stray)} answers no tool_use of the message before it"
        )
    answered = set(results)
    still_open = tuple(i for i in tail.open_uses if i not in answered)
    return Tail(seq + 1, role, frozenset(), still_open)


def searchable_text(message: Message) -> str:
    """The text the full-text index holds for a message: text blocks and tool-result text."""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolResultBlock):
            if isinstance(block.content, str):
                parts.append(block.content)
            else:
                parts.extend(b.text for b in block.content if isinstance(b, TextBlock))
    return "\n".join(p for p in parts if p)
