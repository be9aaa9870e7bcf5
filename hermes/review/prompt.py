"""What a review asks the model, and the digest of a transcript for a different model."""

from __future__ import annotations

from collections.abc import Sequence

from hermes.model import Message, TextBlock, ToolResultBlock, ToolUseBlock

REVIEW_PROMPT = (
    "[Background memory review; the user is not reading this.] Look back over the "
    "conversation above. Is there anything durable worth keeping for future sessions: "
    "the user's preferences, corrections they made, facts about their environment or "
    "projects, lessons learned about how to work with them? Use the memory tool to add "
    "such entries (agent notes to target 'memory', facts about the user to 'user'), or to "
    "replace or remove entries that are now wrong. Do not save task progress, logs or "
    "anything only this conversation needs. If nothing is worth saving, answer "
    "'Nothing to save.' without calling tools."
)

DIGEST_CHARS = 1_500
"""Characters kept of each message in a digest."""


def review_messages(
    transcript: Sequence[Message], *, digest: int | None = None
) -> tuple[Message, ...]:
    """The review's opening messages: the transcript (or a digest of its tail) and the ask.

    The full transcript keeps the session's cached prefix (same model, same
    system prompt); ``digest`` (a count of trailing messages) is for a
    different model, which has no cache to reuse.
    """
    if digest is not None:
        return (Message.user(f"{render_digest(transcript[-digest:])}\n\n{REVIEW_PROMPT}"),)
    ask = TextBlock(REVIEW_PROMPT)
    if transcript and transcript[-1].role == "user":
        last = transcript[-1]
        return (*transcript[:-1], Message("user", (*last.content, ask)))
    return (*transcript, Message("user", (ask,)))


def render_digest(messages: Sequence[Message]) -> str:
    """The messages as plain text, each cut to ``DIGEST_CHARS``."""
    lines = ["[A digest of the latest part of a conversation]"]
    for message in messages:
        parts: list[str] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                parts.append(f"(called {block.name} with {block.input})")
            elif isinstance(block, ToolResultBlock):
                text = block.content if isinstance(block.content, str) else "(blocks)"
                parts.append(f"(tool result: {text})")
        text = " ".join(parts)
        if len(text) > DIGEST_CHARS:
            text = text[:DIGEST_CHARS] + " [...]"
        lines.append(f"{message.role}: {text}")
    return "\n".join(lines)
