"""Turn-loop guardrails."""

from __future__ import annotations

import pytest

from hermes.session import RepeatGuard, UnknownToolStreak, Verdict


def test_identical_call_and_result_warns_at_three_and_halts_at_five() -> None:
    guard = RepeatGuard()
    verdicts = [guard.observe("read_file", {"path": "a"}, "same") for _ in range(5)]
    assert [v.verdict for v in verdicts] == [
        Verdict.OK,
        Verdict.OK,
        Verdict.WARN,
        Verdict.WARN,
        Verdict.HALT,
    ]
    assert "call 3 of read_file" in verdicts[2].message
    assert "called 5 times" in verdicts[4].message


def test_different_arguments_or_results_do_not_count_together() -> None:
    guard = RepeatGuard()
    for i in range(6):
        assert guard.observe("read_file", {"path": str(i)}, "same").verdict is Verdict.OK
    for i in range(6):
        assert guard.observe("terminal", {"command": "date"}, f"t{i}").verdict is Verdict.OK


def test_argument_order_does_not_matter() -> None:
    guard = RepeatGuard(warn_at=2, halt_at=3)
    guard.observe("patch", {"a": 1, "b": 2}, "ok")
    assert guard.observe("patch", {"b": 2, "a": 1}, "ok").verdict is Verdict.WARN


def test_three_batches_of_only_unknown_tools_end_the_turn() -> None:
    streak = UnknownToolStreak()
    known = {"read_file", "terminal"}
    assert not streak.observe(["nope"], known)
    assert not streak.observe(["nope", "also_nope"], known)
    assert streak.observe(["still_nope"], known)


def test_a_batch_with_any_known_tool_resets_the_streak() -> None:
    streak = UnknownToolStreak()
    known = {"read_file"}
    streak.observe(["nope"], known)
    streak.observe(["nope"], known)
    assert not streak.observe(["nope", "read_file"], known)
    assert streak.streak == 0


def test_bad_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="warn_at < halt_at"):
        RepeatGuard(warn_at=5, halt_at=5)
    with pytest.raises(ValueError, match="limit"):
        UnknownToolStreak(0)
