"""The runaway-repetition detector (seed #61): what is a loop, and what is not."""

from __future__ import annotations

import random

from hermes.model.repetition import (
    MIN_CHARS,
    RunawayWatch,
    is_repetition_dominated,
    is_runaway,
)

LINE = "I will check the configuration file once more.\n"


def prose(chars: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    words = " ".join(
        "".join(rng.choice("etaoinshrdlucmfw") for _ in range(rng.randint(2, 9)))
        for _ in range(chars // 4)
    )
    return "\n".join(words[i : i + 80] for i in range(0, len(words), 80))[:chars]


def test_repeated_lines_and_windows_are_loops() -> None:
    assert is_runaway(LINE * 400)
    assert is_runaway("tick " * 4000)  # one line: the 60-character windows repeat
    text = prose(9_000).replace("\n", " ")
    short_lines = "\n".join(text[i : i + 20] for i in range(0, len(text), 20))
    half = short_lines + "\n" + LINE * 260  # more than half of it one line repeated
    assert is_repetition_dominated(half)
    assert not is_runaway(half)  # most of its lines are still distinct


def test_prose_short_text_and_few_repeats_are_not() -> None:
    assert not is_repetition_dominated(prose(40_000))
    assert not is_repetition_dominated(LINE * 100)  # under 16,000 characters
    block = prose(8_000)
    assert not is_repetition_dominated(block * 4)  # four copies: fewer than five repeats
    assert is_repetition_dominated(block * 5)


def test_a_watch_says_so_soon_after_the_threshold() -> None:
    watch = RunawayWatch()
    fed = 0
    while not watch.feed(LINE):
        fed += len(LINE)
        assert fed < MIN_CHARS + 3_000
    assert fed >= MIN_CHARS - len(LINE)
    watch.reset()
    text = prose(60_000)
    assert not any(watch.feed(text[i : i + 10]) for i in range(0, len(text), 10))
