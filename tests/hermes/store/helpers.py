"""Small builders shared by the store tests."""

from __future__ import annotations

from hermes.model.types import Message, TextBlock


def reply(text: str) -> Message:
    """An assistant message of one text block."""
    return Message("assistant", (TextBlock(text),))
