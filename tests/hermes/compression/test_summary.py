from __future__ import annotations

import pytest

from hermes.compression import (
    SECTIONS,
    SUMMARY_END,
    SUMMARY_MARKER,
    SUMMARY_SYSTEM,
    CompressionSettings,
    GarbageSummary,
    accept_summary,
    find_previous_summary,
    strip_summary,
    summary_block_text,
    summary_prompt,
)
from hermes.model.types import Message, TextBlock

from .builders import assistant, result, results, use, user

GOOD = "\n\n".join(f"## {s}\n- {s.lower()} details go here, enough words." for s in SECTIONS)


def _middle() -> list[Message]:
    return [
        user("Please fix the failing test in tests/test_x.py"),
        assistant(
            "Reading it.",
            use("toolu_1", "read_file", path="tests/test_x.py", extra="q" * 1000),
        ),
        results(result("toolu_1", "r" * 5000), result("toolu_2", "boom", error=True)),
        assistant("Fixed.", thinking=True),
    ]


def test_prompt_renders_the_middle_readably() -> None:
    prompt = summary_prompt(_middle(), None, None)
    for heading in SECTIONS:
        assert f"## {heading}" in prompt
    assert "[user] Please fix the failing test in tests/test_x.py" in prompt
    assert "[assistant called read_file (toolu_1)]" in prompt
    assert '"path":"tests/test_x.py"' in prompt
    assert "[result of read_file (toolu_1), ok]" in prompt
    assert "[result of unknown tool (toolu_2), error] boom" in prompt
    assert "chars omitted" in prompt  # long args and results are shortened
    assert "r" * 1000 not in prompt and "q" * 400 not in prompt
    assert "let me think" not in prompt  # thinking is left out
    assert "previous summary" not in prompt.lower()
    assert "focus" not in prompt.lower()
    assert "summar" in SUMMARY_SYSTEM.lower()


def test_prompt_updates_previous_summary_and_steers_to_focus() -> None:
    prompt = summary_prompt(_middle(), "old facts: port 8080", "the database migration")
    assert "<previous-summary>\nold facts: port 8080\n</previous-summary>" in prompt
    assert "Update the previous summary with what follows" in prompt
    assert "focus on: the database migration" in prompt
    assert prompt.index("<previous-summary>") < prompt.index("<conversation>")


def test_prompt_skips_old_summary_blocks() -> None:
    marked = Message("assistant", (TextBlock(summary_block_text("OLD BODY", "model")),))
    prompt = summary_prompt([user("hi"), marked, user("more")], "OLD BODY", None)
    conversation = prompt[prompt.index("<conversation>") :]
    assert "OLD BODY" not in conversation
    assert SUMMARY_MARKER not in conversation


def test_marker_round_trip() -> None:
    text = summary_block_text("  body line\nsecond  ", "static")
    assert text.startswith(SUMMARY_MARKER + " (static summary)")
    assert text.endswith(SUMMARY_END)
    messages = [user("a"), Message("assistant", (TextBlock(text),)), user("b")]
    assert find_previous_summary(messages) == "body line\nsecond"
    assert find_previous_summary([user("a"), assistant("b")]) is None


def test_latest_summary_wins_and_strip() -> None:
    first = TextBlock(summary_block_text("first", "model"))
    second = TextBlock(summary_block_text("second", "static"))
    merged = Message("user", (TextBlock("question"), second))
    assert find_previous_summary([Message("user", (first,)), assistant("x"), merged]) == "second"
    assert strip_summary(merged) == user("question")
    alone = Message("user", (first,))
    assert strip_summary(alone) is alone  # a message that is only a summary stays whole
    plain = user("q")
    assert strip_summary(plain) is plain


def test_accepts_a_good_summary_and_trims_echoed_marker() -> None:
    settings = CompressionSettings()
    assert accept_summary(GOOD, settings) == GOOD
    echoed = summary_block_text(GOOD, "model")
    assert accept_summary("\n" + echoed + "\n", settings) == GOOD


def test_accepts_bold_or_colon_headings() -> None:
    text = (
        "**Goal**\nship the release, with all the tests passing on CI first.\n"
        "Progress so far:\nbuilt the wheel, ran the linters, fixed two type errors.\n"
        "Files touched:\nsetup.py, hermes/cli/app.py and the changelog for this version.\n"
        "Next steps:\npublish to the index once the maintainers approve the final tag.\n"
    )
    assert accept_summary(text, CompressionSettings()) == text.strip()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("## Goal\nshort", "too short"),
        ("I'm sorry, I can't help with that. " * 10, "0 of the 5"),
        (
            "## Goal and user requests\n" + "blah " * 60 + "\n## Progress\n" + "x " * 10,
            "2 of the 5",
        ),
        (SUMMARY_MARKER + " (model summary)]\n" + SUMMARY_END, "empty"),
    ],
)
def test_rejects_garbage(text: str, reason: str) -> None:
    with pytest.raises(GarbageSummary, match=reason) as info:
        accept_summary(text, CompressionSettings())
    assert reason in info.value.reason


def test_overlong_summary_is_cut_not_refused() -> None:
    settings = CompressionSettings(summary_min_tokens=100, summary_max_tokens_cap=200)  # 800 chars
    long = GOOD + "\n" + "\n".join(f"- fact {i}" for i in range(500))
    out = accept_summary(long, settings)
    assert len(out) <= settings.summary_max_chars
    assert out.startswith(GOOD[:300])
    assert out.endswith(f"[Summary cut at 800 of {len(long):,} characters.]")
