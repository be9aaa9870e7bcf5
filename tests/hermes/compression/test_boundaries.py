from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes.compression import (
    CompressionSettings,
    assemble,
    head_end,
    message_tokens,
    split,
    tail_start,
    validate_transcript,
)
from hermes.model.types import Message

from ..transcripts import transcripts
from .builders import assistant, pairs_intact, result, results, session, use, user

NO_BUDGET = 0
HUGE = 10**9


def test_head_is_protect_first_messages() -> None:
    messages = session(4)
    cut = split(messages, CompressionSettings(protect_first=3, protect_last=3), NO_BUDGET)
    assert cut is not None
    assert cut.head == tuple(messages[:3])
    assert cut.tail == tuple(messages[-3:])
    assert cut.head + cut.middle + cut.tail == tuple(messages)


def test_head_extends_over_a_trailing_tool_use() -> None:
    messages = session(4)  # [user, assistant(use), user(result), assistant(use), user(result)..]
    assert head_end(messages, 2) == 3
    assert head_end(messages, 4) == 5
    assert head_end(messages, 3) == 3
    assert head_end(messages, 0) == 0
    assert head_end(messages[:2], 2) == 2  # nothing to extend into


def test_tail_never_fewer_than_protect_last() -> None:
    messages = session(6)
    for last in range(1, 12):
        start = tail_start(messages, last, NO_BUDGET)
        assert len(messages) - start >= last


def test_tail_takes_what_fits_the_budget() -> None:
    messages = session(6)
    budget = sum(message_tokens(m) for m in messages[-9:])
    start = tail_start(messages, 2, budget)
    assert start == len(messages) - 9
    assert messages[len(messages) - 8].role == "user"  # a results message: the tail moves
    assert tail_start(messages, 2, budget - 1) == len(messages) - 9


def test_tail_start_moves_off_tool_results() -> None:
    messages = session(3)  # ends: ..., assistant(use), user(result), assistant(answer)
    assert messages[-2].role == "user"
    start = tail_start(messages, 2, NO_BUDGET)
    assert start == len(messages) - 3
    assert messages[start].tool_uses()


def test_none_when_middle_empty() -> None:
    messages = session(1)  # 6 messages
    assert split(messages, CompressionSettings(protect_first=3, protect_last=3), NO_BUDGET) is None
    assert split(messages, CompressionSettings(protect_first=3, protect_last=1), HUGE) is None
    assert split([], CompressionSettings(), NO_BUDGET) is None


def test_head_and_tail_never_overlap() -> None:
    messages = session(2)  # 12 messages
    for first in range(0, 14):
        for last in range(1, 14):
            cut = split(messages, CompressionSettings(protect_first=first, protect_last=last), 0)
            if cut is not None:
                assert cut.middle
                assert cut.head + cut.middle + cut.tail == tuple(messages)


def test_open_tool_use_at_the_end_stays_in_tail() -> None:
    messages = [*session(2), user("again"), assistant("", use("toolu_z"))]
    cut = split(messages, CompressionSettings(protect_last=1), NO_BUDGET)
    assert cut is not None
    assert cut.tail == (messages[-1],)
    assert validate_transcript(assemble(cut.head, "sum", cut.tail, "static")) == []


@settings(max_examples=150, deadline=None)
@given(
    messages=transcripts(max_turns=4, max_steps=4),
    first=st.integers(0, 6),
    last=st.integers(1, 8),
    budget=st.integers(0, 400),
)
def test_random_transcripts_every_boundary_keeps_pairs(
    messages: list[Message], first: int, last: int, budget: int
) -> None:
    cut = split(messages, CompressionSettings(protect_first=first, protect_last=last), budget)
    if cut is None:
        return
    assert cut.middle
    assert cut.head + cut.middle + cut.tail == tuple(messages)
    assert pairs_intact([cut.head, cut.middle, cut.tail])
    assert len(cut.tail) >= min(last, len(messages) - len(cut.head))
    assert len(cut.head) >= min(first, len(messages))
    out = assemble(cut.head, "the summary", cut.tail, "model")
    assert validate_transcript(out) == []


def test_every_cut_position_of_a_tool_heavy_transcript() -> None:
    messages = [
        user("go"),
        assistant("", use("a1"), use("a2")),
        results(result("a1"), result("a2"), text="steer"),
        assistant("", use("b1")),
        results(result("b1")),
        assistant("thinking done", thinking=True),
        user("next"),
        assistant("", use("c1")),
        results(result("c1")),
        assistant("", use("d1")),
        results(result("d1")),
        assistant("end"),
    ]
    assert validate_transcript(messages) == []
    for first in range(len(messages) + 1):
        for last in range(1, len(messages) + 1):
            cut = split(messages, CompressionSettings(protect_first=first, protect_last=last), 0)
            if cut is None:
                continue
            assert pairs_intact([cut.head, cut.middle, cut.tail]), (first, last)
            assert validate_transcript(assemble(cut.head, "s", cut.tail, "static")) == []
