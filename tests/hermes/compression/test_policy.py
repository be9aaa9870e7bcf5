from __future__ import annotations

from hermes.compression import CompressionPolicy, CompressionSettings, SummaryFailure

T = 10_000  # threshold


def test_under_threshold_and_disabled() -> None:
    policy = CompressionPolicy()
    no = policy.should_compact(9_999, T, forced=False)
    assert not no and "under the threshold of 10,000" in no.reason
    assert policy.should_compact(10_000, T, forced=False)
    off = CompressionPolicy(CompressionSettings(enabled=False))
    assert "disabled" in off.should_compact(50_000, T, forced=False).reason
    assert off.should_compact(5, T, forced=True)


def test_cooldown_ladder() -> None:
    policy = CompressionPolicy()
    assert policy.should_use_model(0.0)
    policy.record(20_000, 5_000, "static", failed_model_call=True, now=100.0)
    assert not policy.should_use_model(159.9)
    assert policy.cooldown_remaining(130.0) == 30.0
    assert policy.should_use_model(160.0)
    policy.record(20_000, 5_000, "static", failed_model_call=True, now=200.0)
    assert not policy.should_use_model(499.9) and policy.should_use_model(500.0)
    policy.record(20_000, 5_000, "static", failed_model_call=True, now=1_000.0)
    assert not policy.should_use_model(1_899.9) and policy.should_use_model(1_900.0)
    policy.record(20_000, 5_000, "static", failed_model_call=True, now=2_000.0)
    assert not policy.should_use_model(2_899.9) and policy.should_use_model(2_900.0)  # 3rd+: 900
    # static during the cooldown neither advances nor resets the ladder
    policy.record(20_000, 5_000, "static", failed_model_call=False, now=2_100.0)
    assert policy.failures == 4 and not policy.should_use_model(2_200.0)
    # a model success resets it
    policy.record(20_000, 5_000, "model", failed_model_call=False, now=3_000.0)
    assert policy.failures == 0 and policy.should_use_model(3_000.0)
    policy.record(20_000, 5_000, "static", failed_model_call=True, now=4_000.0)
    assert not policy.should_use_model(4_059.0) and policy.should_use_model(4_060.0)


def test_anti_thrash_pauses_after_two_weak_passes_and_resumes_on_growth() -> None:
    policy = CompressionPolicy()
    policy.record(12_000, 11_000, "model", False, 0.0)  # 8 % saved: weak
    assert policy.should_compact(12_000, T, forced=False)  # one weak pass is not enough
    policy.record(12_000, 11_500, "model", False, 1.0)  # weak again: pause at 11,500
    paused = policy.should_compact(12_000, T, forced=False)
    assert not paused
    assert "resumes at 12,500 tokens" in paused.reason  # 11,500 + 10 % of 10,000
    assert policy.should_compact(12_499, T, forced=False).compact is False
    assert policy.should_compact(5, T, forced=True)  # /compress still runs
    resumed = policy.should_compact(12_500, T, forced=False)
    assert resumed and "grew past 12,500" in resumed.reason
    # still weak after resuming: paused again, from the new size
    policy.record(12_500, 12_000, "model", False, 2.0)
    assert not policy.should_compact(12_900, T, forced=False)
    assert policy.should_compact(13_000, T, forced=False)
    # a pass that saves enough ends the pause and the streak
    policy.record(13_000, 5_000, "model", False, 3.0)
    assert policy.paused_at is None and policy.weak_streak == 0
    assert policy.should_compact(10_000, T, forced=False)


def test_a_good_pass_between_weak_ones_breaks_the_streak() -> None:
    policy = CompressionPolicy()
    policy.record(12_000, 11_500, "model", False, 0.0)
    policy.record(12_000, 6_000, "model", False, 0.0)
    policy.record(12_000, 11_500, "model", False, 0.0)
    assert policy.should_compact(12_000, T, forced=False)


def test_attempts_per_turn() -> None:
    policy = CompressionPolicy(CompressionSettings(max_attempts_per_turn=2))
    policy.begin_turn()
    for _ in range(2):
        assert policy.should_compact(20_000, T, forced=False)
        policy.note_attempt()
    refused = policy.should_compact(20_000, T, forced=False)
    assert not refused and "2 times this turn" in refused.reason
    assert policy.should_compact(20_000, T, forced=True)
    policy.begin_turn()
    assert policy.should_compact(20_000, T, forced=False)


def test_record_does_not_count_attempts() -> None:
    policy = CompressionPolicy()
    policy.record(20_000, 5_000, "model", False, 0.0)
    assert policy.attempts == 0 and policy.last_method == "model"


def test_forced_compactions_get_past_the_cooldown() -> None:
    policy = CompressionPolicy()
    policy.record(20_000, 5_000, "static", failed_model_call=True, now=100.0)
    assert not policy.should_use_model(120.0)
    assert policy.should_use_model(120.0, forced=True)


def test_an_abort_holds_the_threshold_trigger_for_its_cooldown() -> None:
    policy = CompressionPolicy()
    policy.record_abort(now=100.0)
    held = policy.should_compact(20_000, T, forced=False, now=130.0)
    assert not held and "held after a summary failure" in held.reason
    assert "resumes in 30 s" in held.reason
    assert policy.should_compact(20_000, T, forced=True, now=130.0)
    assert policy.should_compact(20_000, T, forced=False, now=160.0)
    policy.record_abort(now=200.0)  # the ladder climbs: 300 s
    assert not policy.should_compact(20_000, T, forced=False, now=499.0)
    policy.record(20_000, 5_000, "model", failed_model_call=False, now=300.0)
    assert policy.should_compact(20_000, T, forced=False, now=301.0)  # a summary ends it


def test_overloads_in_a_row_are_counted_and_reset() -> None:
    policy = CompressionPolicy()
    assert policy.note_failure(SummaryFailure.OVERLOADED) == 1
    assert policy.note_failure(SummaryFailure.OVERLOADED) == 2
    assert policy.note_failure(SummaryFailure.GARBAGE) == 0
    assert policy.note_failure(SummaryFailure.OVERLOADED) == 1


def test_cooldowns_follow_the_failure_class() -> None:
    """Seed #196: timeouts and truncated summaries climb 60/300/900 on their own counters;
    garbage, closed streams and empty summaries wait 30 s, anything else 60 s; a new
    cooldown never shortens a longer live one."""
    policy = CompressionPolicy()

    def fail(failure: SummaryFailure, now: float) -> float:
        policy.note_failure(failure)
        policy.record(20_000, 5_000, "static", failed_model_call=True, now=now)
        return policy.cooldown_remaining(now)

    assert fail(SummaryFailure.TIMEOUT, 0.0) == 60.0
    assert fail(SummaryFailure.TIMEOUT, 100.0) == 300.0
    assert fail(SummaryFailure.TRUNCATED, 1_000.0) == 60.0  # its own counter
    assert fail(SummaryFailure.TIMEOUT, 2_000.0) == 900.0
    assert fail(SummaryFailure.EMPTY, 2_100.0) == 800.0  # 30 s would shorten the 900 s: kept
    assert fail(SummaryFailure.GARBAGE, 5_000.0) == 30.0
    assert fail(SummaryFailure.CLOSED_STREAM, 6_000.0) == 30.0
    assert fail(SummaryFailure.ERROR, 7_000.0) == 60.0
    assert fail(SummaryFailure.ERROR, 8_000.0) == 60.0  # not laddered
    policy.record(20_000, 5_000, "model", failed_model_call=False, now=9_000.0)
    assert fail(SummaryFailure.TIMEOUT, 10_000.0) == 60.0  # a success reset the counters


def test_a_copy_climbs_its_own_ladder() -> None:
    """A turn's copy of the policy counts its failures without touching the original's."""
    policy = CompressionPolicy()
    policy.note_failure(SummaryFailure.TIMEOUT)
    policy.record(20_000, 5_000, "static", failed_model_call=True, now=0.0)
    twin = policy.copy()
    twin.note_failure(SummaryFailure.TIMEOUT)
    twin.record(20_000, 5_000, "static", failed_model_call=True, now=100.0)
    assert twin.cooldown_remaining(100.0) == 300.0
    policy.note_failure(SummaryFailure.TIMEOUT)
    policy.record(20_000, 5_000, "static", failed_model_call=True, now=100.0)
    assert policy.cooldown_remaining(100.0) == 300.0  # its own second step, not a third


def test_abort_on_summary_failure_makes_every_failure_abort() -> None:
    """Seed #197: at the default an ``error`` gets the static summary; with the setting on,
    every failure aborts and keeps every message."""
    assert not CompressionPolicy().aborts(SummaryFailure.ERROR)
    assert CompressionPolicy().aborts(SummaryFailure.EMPTY)
    strict = CompressionPolicy(CompressionSettings(abort_on_summary_failure=True))
    assert strict.aborts(SummaryFailure.ERROR) and strict.aborts(SummaryFailure.GARBAGE)
