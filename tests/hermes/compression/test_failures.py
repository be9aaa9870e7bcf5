"""Which summary failures abort a compaction and which degrade to the static summary (#197)."""

from __future__ import annotations

import pytest

from hermes.compression import SummaryFailure, aborts, model_failure
from hermes.model import FailureReason


@pytest.mark.parametrize(
    ("reason", "failure"),
    [
        (FailureReason.TRANSPORT, SummaryFailure.NETWORK),
        (FailureReason.STREAM_TRUNCATED, SummaryFailure.CLOSED_STREAM),
        (FailureReason.AUTH, SummaryFailure.ACCESS),
        (FailureReason.BILLING, SummaryFailure.ACCESS),
        (FailureReason.PERMISSION, SummaryFailure.ACCESS),
        (FailureReason.OVERLOADED, SummaryFailure.OVERLOADED),
        (FailureReason.RATE_LIMIT, SummaryFailure.TIMEOUT),  # a 429 is not an access error
        (FailureReason.TIMEOUT, SummaryFailure.TIMEOUT),
        (FailureReason.SERVER_ERROR, SummaryFailure.ERROR),
        (FailureReason.INVALID_REQUEST, SummaryFailure.ERROR),
    ],
)
def test_model_errors_are_classed(reason: FailureReason, failure: SummaryFailure) -> None:
    assert model_failure(reason) is failure


def test_what_aborts() -> None:
    aborting = {f for f in SummaryFailure if aborts(f, 1)}
    assert aborting == {
        SummaryFailure.NETWORK,
        SummaryFailure.CLOSED_STREAM,
        SummaryFailure.ACCESS,
        SummaryFailure.TRUNCATED,
        SummaryFailure.EMPTY,
        SummaryFailure.OVERLOADED,
    }
    assert aborts(SummaryFailure.OVERLOADED, 2)
    assert not aborts(SummaryFailure.OVERLOADED, 3)  # the third in a row degrades
