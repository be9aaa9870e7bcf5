"""The summary's text block: how it is marked, recognised and taken out again."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hermes.model.types import Message, TextBlock

SUMMARY_MARKER = "[Context summary — earlier conversation compacted"
"""A text block starting with this is a compaction summary."""
SUMMARY_END = "[End of context summary; the conversation continues below.]"


def summary_block_text(body: str, method: str) -> str:
    """The summary block's text: marker header naming ``method``, body, end line."""
    return (
        f"{SUMMARY_MARKER} ({method} summary). It stands for messages that were removed "
        f"to save context; treat it as background, not as a new request.]\n\n"
        f"{body.strip()}\n\n{SUMMARY_END}"
    )


def is_summary_block(block: object) -> bool:
    return isinstance(block, TextBlock) and block.text.startswith(SUMMARY_MARKER)


def summary_body(text: str) -> str:
    """The body of a summary block's text (without header and end line)."""
    if text.startswith(SUMMARY_MARKER):
        _, _, text = text.partition("\n")
    text = text.strip()
    if text.endswith(SUMMARY_END):
        text = text[: -len(SUMMARY_END)]
    return text.strip()


def find_previous_summary(messages: Sequence[Message]) -> str | None:
    """The body of the latest summary block in ``messages``, if any."""
    for message in reversed(messages):
        for block in reversed(message.content):
            if isinstance(block, TextBlock) and is_summary_block(block):
                return summary_body(block.text)
    return None


def strip_summary(message: Message) -> Message:
    """``message`` without summary blocks, unless they are all it holds (kept whole then)."""
    kept = tuple(b for b in message.content if not is_summary_block(b))
    if not kept or len(kept) == len(message.content):
        return message
    return attrs.evolve(message, content=kept)
