"""Retry and stale-stream policies."""

from __future__ import annotations

import random

import pytest

from hermes.model import RetryPolicy, StalePolicy


def test_backoff_doubles_with_jitter_below_the_cap() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0, jitter=0.25)
    rng = random.Random(7)
    for retry, nominal in enumerate([1, 2, 4, 8, 8]):
        delay = policy.delay(retry, None, rng)
        assert nominal * 0.75 <= delay <= nominal


def test_retry_after_is_honoured_up_to_its_cap() -> None:
    policy = RetryPolicy(retry_after_cap=60.0)
    assert policy.delay(0, 0.005) == 0.005
    assert policy.delay(3, 120.0) == 60.0


def test_stale_timeout_grows_with_prompt_size() -> None:
    stale = StalePolicy()
    assert stale.timeout(1_000) == 180.0
    assert stale.timeout(60_000) == 240.0
    assert stale.timeout(150_000) == 300.0


@pytest.mark.parametrize("field", ["max_attempts", "deadline"])
def test_policies_reject_non_positive_values(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        RetryPolicy(**{field: 0})
    with pytest.raises(ValueError, match="base"):
        StalePolicy(base=-1)
