"""What a policy keeps of its summary failures across restarts (seed #196)."""

from __future__ import annotations

from hermes.compression import CompressionPolicy, FailureState, SummaryFailure


def _failed(policy: CompressionPolicy, failure: SummaryFailure, now: float) -> None:
    policy.note_failure(failure)
    policy.record(20_000, 5_000, "static", failed_model_call=True, now=now)


def test_a_fresh_policy_has_nothing_to_keep() -> None:
    assert CompressionPolicy().failure_state().clear


def test_a_restored_policy_climbs_on_from_where_it_was() -> None:
    policy = CompressionPolicy()
    _failed(policy, SummaryFailure.TIMEOUT, 0.0)
    _failed(policy, SummaryFailure.TRUNCATED, 100.0)
    state = policy.failure_state()
    assert state == FailureState(
        until=160.0,  # the truncated summary's first step, 60 s
        failures=2,
        climbs=((SummaryFailure.TRUNCATED, 1), (SummaryFailure.TIMEOUT, 1)),
    )
    # A restart: a new policy on a new clock, 1,000 s later, given the end 10 s ahead.
    restored = CompressionPolicy()
    restored.restore_failures(FailureState(until=1_010.0, failures=2, climbs=state.climbs))
    assert not restored.should_use_model(1_009.9) and restored.should_use_model(1_010.0)
    _failed(restored, SummaryFailure.TIMEOUT, 1_020.0)
    assert restored.cooldown_remaining(1_020.0) == 300.0  # its second timeout step
    assert restored.failure_state().failures == 3


def test_an_abort_hold_and_overloads_are_kept() -> None:
    policy = CompressionPolicy()
    policy.aborts(SummaryFailure.OVERLOADED)
    policy.record_abort(50.0)
    state = policy.failure_state()
    assert (state.held, state.overloads, state.until) == (True, 1, 110.0)
    restored = CompressionPolicy()
    restored.restore_failures(state)
    held = restored.should_compact(20_000, 10_000, forced=False, now=60.0)
    assert not held and "held after a summary failure" in held.reason
    assert restored.should_compact(20_000, 10_000, forced=True, now=60.0)  # /compress
    restored.aborts(SummaryFailure.OVERLOADED)
    assert restored.overloads == 2  # the second overload in a row, not the first


def test_a_model_summary_clears_the_state() -> None:
    policy = CompressionPolicy()
    _failed(policy, SummaryFailure.TIMEOUT, 0.0)
    assert not policy.failure_state().clear
    policy.record(20_000, 5_000, "model", failed_model_call=False, now=500.0)
    assert policy.failure_state().clear
