"""The review's opening messages, the digest for another model, and the settings."""

from __future__ import annotations

import pytest

from hermes.model import Message
from hermes.model.types import TextBlock, ToolResultBlock, ToolUseBlock
from hermes.review import REVIEW_PROMPT, ReviewSettings, render_digest, review_messages
from hermes.review.prompt import DIGEST_CHARS


def _transcript() -> tuple[Message, ...]:
    return (
        Message.user("list the files"),
        Message(
            "assistant",
            (TextBlock("Listing."), ToolUseBlock("toolu_1", "terminal", {"command": "ls"})),
        ),
        Message("user", (ToolResultBlock("toolu_1", "a.txt\nb.txt"),)),
        Message("assistant", (TextBlock("Two files: a.txt and b.txt."),)),
    )


def test_the_review_replays_the_transcript_and_asks_after_it() -> None:
    transcript = _transcript()
    messages = review_messages(transcript)
    assert messages[: len(transcript)] == transcript  # byte-identical prefix
    assert messages[-1] == Message("user", (TextBlock(REVIEW_PROMPT),))


def test_a_trailing_user_message_takes_the_review_question_as_its_last_block() -> None:
    transcript = (*_transcript(), Message.user("thanks"))
    messages = review_messages(transcript)
    assert len(messages) == len(transcript)  # roles still alternate
    assert messages[:-1] == transcript[:-1]
    assert [b.text for b in messages[-1].content if isinstance(b, TextBlock)] == [
        "thanks",
        REVIEW_PROMPT,
    ]


def test_the_digest_is_one_user_message_of_the_tail() -> None:
    transcript = _transcript()
    (message,) = review_messages(transcript, digest=2)
    assert message.role == "user"
    text = message.text()
    assert text.startswith("[A digest of the latest part of a conversation]")
    assert "user: (tool result: a.txt\nb.txt)" in text
    assert "assistant: Two files: a.txt and b.txt." in text
    assert "list the files" not in text  # older than the last two messages
    assert text.endswith(REVIEW_PROMPT)


def test_the_digest_shows_tool_calls_and_cuts_long_messages() -> None:
    long = "x" * (DIGEST_CHARS + 500)
    digest = render_digest([*_transcript()[:2], Message.user(long)])
    lines = digest.splitlines()
    assert lines[2] == "assistant: Listing. (called terminal with {'command': 'ls'})"
    assert lines[3] == f"user: {'x' * DIGEST_CHARS} [...]"


@pytest.mark.parametrize(
    "field",
    [
        {"interval": 0},
        {"interval": True},
        {"max_iterations": 0},
        {"token_budget": 0},
        {"max_tokens": 0},
        {"digest_messages": 1},
        {"enabled": "yes"},
        {"model": "  "},
    ],
)
def test_review_settings_refuse_nonsense(field: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="review settings"):
        ReviewSettings(**field)  # type: ignore[arg-type]


def test_review_settings_defaults_are_hermes() -> None:
    settings = ReviewSettings()
    assert (settings.interval, settings.max_iterations, settings.token_budget) == (10, 16, 600_000)
    assert settings.model is None and settings.enabled
