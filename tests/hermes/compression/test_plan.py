from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes.compression import (
    SUMMARY_MARKER,
    CompactionPlan,
    CompressionSettings,
    estimate_tokens,
    finish_plan,
    plan_compaction,
    validate_transcript,
)
from hermes.model.types import ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock

from ..transcripts import transcripts
from .builders import pairs_intact, session

WINDOW = 40_000
OUT = 4_000  # threshold 18,000, tail budget 3,600


def _summary_count(messages: tuple[Message, ...]) -> int:
    return sum(
        1
        for m in messages
        for b in m.content
        if isinstance(b, TextBlock) and b.text.startswith(SUMMARY_MARKER)
    )


def _settings(**fields: Any) -> CompressionSettings:
    """Hermes' settings without the 75 % floor for small windows: these windows are small
    so that the plans stay readable, and the numbers below are for the 50 % threshold."""
    return CompressionSettings(small_window=0, **fields)


def _plan(
    messages: Sequence[Message],
    *,
    focus: str | None = None,
    forced: bool = False,
    current_tokens: int | None = None,
) -> CompactionPlan | None:
    return plan_compaction(
        messages,
        _settings(),
        context_window=WINDOW,
        max_tokens=OUT,
        focus=focus,
        forced=forced,
        current_tokens=current_tokens,
    )


def test_nothing_to_compact() -> None:
    assert _plan(session(1)) is None


def test_summary_plan() -> None:
    messages = session(40, output_chars=1_000)  # small results: nothing to prune
    plan = _plan(messages, focus="the parser")
    assert plan is not None
    assert not plan.prune_only and plan.pruned_count == 0
    assert plan.threshold == 18_000 and plan.summary_max_tokens == 2_000
    assert plan.before_tokens == estimate_tokens(messages) == plan.pruned_tokens
    assert plan.split.head + plan.split.middle + plan.split.tail == tuple(messages)
    assert pairs_intact([plan.split.head, plan.split.middle, plan.split.tail])
    assert "focus on: the parser" in plan.summary_prompt
    assert plan.previous_summary is None
    out = finish_plan(plan, "BODY", "model")
    assert validate_transcript(out) == []
    assert _summary_count(out) == 1
    assert estimate_tokens(out) < plan.before_tokens / 2
    with pytest.raises(ValueError, match="not prune-only"):
        finish_plan(plan, None, "prune")


def test_prune_only_when_pruning_is_enough() -> None:
    messages = session(6, output_chars=6_000)  # ~20k tokens, mostly old tool output
    plan = _plan(messages)
    assert plan is not None
    assert plan.before_tokens > plan.threshold > plan.pruned_tokens
    assert plan.prune_only and plan.pruned_count > 0
    out = finish_plan(plan, None, "prune")
    assert out == plan.messages
    assert validate_transcript(out) == []
    assert len(out) == len(messages)
    assert estimate_tokens(out) == plan.pruned_tokens
    # the summariser still sees the unpruned (shortened) middle
    assert "Old tool output pruned" not in plan.summary_prompt
    forced = _plan(messages, forced=True)
    assert forced is not None and not forced.prune_only


def test_current_tokens_beats_the_estimate() -> None:
    messages = session(6, output_chars=6_000)
    plan = _plan(messages, current_tokens=60_000)
    assert plan is not None and plan.before_tokens == 60_000
    assert plan.pruned_tokens > plan.threshold and not plan.prune_only


def _placement(messages: tuple[Message, ...], head_len: int) -> str:
    [(index, size)] = [
        (i, len(m.content))
        for i, m in enumerate(messages)
        for b in m.content
        if isinstance(b, TextBlock) and b.text.startswith(SUMMARY_MARKER)
    ]
    if size == 1 and index == head_len:
        return f"own {messages[index].role}"
    return "head" if index < head_len else "tail"


def _compact_rounds(settings: CompressionSettings, window: int) -> set[str]:
    """Compact, grow, compact again...: check each result; return where summaries went."""
    placements = set()
    messages: tuple[Message, ...] = tuple(session(10, output_chars=1_000))
    for round_ in range(4):
        plan = plan_compaction(
            messages, settings, context_window=window, max_tokens=OUT, forced=True
        )
        assert plan is not None
        if round_ == 0:
            assert plan.previous_summary is None
        else:
            assert plan.previous_summary == f"SUMMARY {round_ - 1}"
            assert "Update the previous summary" in plan.summary_prompt
            assert f"SUMMARY {round_ - 1}" in plan.summary_prompt
        messages = finish_plan(plan, f"SUMMARY {round_}", "model" if round_ % 2 else "static")
        assert validate_transcript(messages) == []
        assert _summary_count(messages) == 1
        placements.add(_placement(messages, len(plan.split.head)))
        messages = (*messages, *_renumber(session(round_ + 2, output_chars=1_000), f"r{round_}_"))
    return placements


@pytest.mark.parametrize("window", [WINDOW, 8_000])
@pytest.mark.parametrize("first", [1, 2, 3, 6])
@pytest.mark.parametrize("last", [1, 3, 6])
def test_iterative_summary_is_found_carried_and_not_duplicated(
    window: int, first: int, last: int
) -> None:
    _compact_rounds(_settings(protect_first=first, protect_last=last), window)


def test_iterative_compaction_meets_every_placement() -> None:
    seen: set[str] = set()
    for first, last in [(3, 1), (3, 6), (6, 6), (6, 1)]:
        seen |= _compact_rounds(_settings(protect_first=first, protect_last=last), 8_000)
    assert seen == {"head", "tail", "own user", "own assistant"}


def _renumber(messages: list[Message], prefix: str) -> list[Message]:
    """The same messages with fresh tool ids."""
    out = []
    for m in messages:
        content: list[ContentBlock] = []
        for b in m.content:
            if isinstance(b, ToolUseBlock):
                content.append(attrs.evolve(b, id=prefix + b.id))
            elif isinstance(b, ToolResultBlock):
                content.append(attrs.evolve(b, tool_use_id=prefix + b.tool_use_id))
            else:
                content.append(b)
        out.append(Message(m.role, tuple(content)))
    return out


def test_static_summary_of_the_plan() -> None:
    settings = _settings(static_summary_chars=1_000)
    plan = plan_compaction(
        session(40, output_chars=1_000), settings, context_window=WINDOW, max_tokens=OUT
    )
    assert plan is not None
    text = plan.static_summary()
    assert len(text) <= 1_000 and "## Progress and completed actions" in text
    assert validate_transcript(finish_plan(plan, text, "static")) == []


def test_compacting_200_messages_takes_milliseconds() -> None:
    messages = session(34, steps=2, output_chars=3_000)[:200]
    assert len(messages) == 200 and validate_transcript(messages) == []
    settings = _settings()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        plan = plan_compaction(messages, settings, context_window=200_000, max_tokens=8_000)
        assert plan is not None
        out = finish_plan(plan, plan.static_summary(), "static")
        best = min(best, time.perf_counter() - start)
    assert validate_transcript(out) == []
    assert best < 0.05  # measured ~2 ms; generous for a shared machine


@settings(max_examples=100, deadline=None)
@given(
    messages=transcripts(max_turns=4, max_steps=4),
    first=st.integers(0, 5),
    last=st.integers(1, 6),
    window=st.integers(500, 20_000),
    forced=st.booleans(),
)
def test_random_transcripts_compact_to_valid_transcripts(
    messages: list[Message], first: int, last: int, window: int, forced: bool
) -> None:
    cfg = _settings(protect_first=first, protect_last=last, prune_min_chars=200)
    plan = plan_compaction(
        messages, cfg, context_window=window, max_tokens=window // 4, forced=forced
    )
    if plan is None:
        return
    assert validate_transcript(plan.messages) == []
    assert len(plan.messages) == len(messages)
    if plan.prune_only:
        assert finish_plan(plan, None, "prune") == plan.messages
    text = plan.static_summary()
    assert len(text) <= cfg.static_summary_chars
    for body in (text, "model body"):
        out = finish_plan(plan, body, "model")
        assert validate_transcript(out) == []
        assert _summary_count(out) == 1
