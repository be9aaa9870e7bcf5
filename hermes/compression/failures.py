"""What a failed summary call was, and whether the compaction aborts or degrades (seed #197).

A failed summary either *aborts* the compaction (nothing is written, every
message is kept: the failure says nothing about the transcript and will pass)
or *degrades* to the deterministic static summary. As Hermes decides it:

- abort: a network failure, a closed stream, an access or quota error (a
  rate limit is not one), a summary cut at its output limit, an empty summary;
  an overload aborts too, until ``OVERLOADS_BEFORE_DEGRADING`` in a row;
- degrade: anything else (a server error, a timeout, a rate limit, a summary
  that is too short or lacks the requested sections, a compressor that died).

The failure is classed after the retry on the main model, when there is one
(``ContextKeeper``).
"""

from __future__ import annotations

import enum

from hermes.model import FailureReason


class SummaryFailure(enum.Enum):
    NETWORK = "network"
    CLOSED_STREAM = "closed_stream"
    ACCESS = "access"
    TRUNCATED = "truncated"
    EMPTY = "empty"
    OVERLOADED = "overloaded"
    TIMEOUT = "timeout"
    GARBAGE = "garbage"
    ERROR = "error"
    """Any other failure: a server error, an invalid request, a compressor that died."""


ABORTING = frozenset(
    {
        SummaryFailure.NETWORK,
        SummaryFailure.CLOSED_STREAM,
        SummaryFailure.ACCESS,
        SummaryFailure.TRUNCATED,
        SummaryFailure.EMPTY,
    }
)
OVERLOADS_BEFORE_DEGRADING = 3
"""The 3rd overloaded summary in a row degrades to the static summary; earlier ones abort."""

_BY_REASON: dict[FailureReason, SummaryFailure] = {
    FailureReason.TRANSPORT: SummaryFailure.NETWORK,
    FailureReason.STREAM_TRUNCATED: SummaryFailure.CLOSED_STREAM,
    FailureReason.AUTH: SummaryFailure.ACCESS,
    FailureReason.BILLING: SummaryFailure.ACCESS,
    FailureReason.PERMISSION: SummaryFailure.ACCESS,
    FailureReason.OVERLOADED: SummaryFailure.OVERLOADED,
    FailureReason.TIMEOUT: SummaryFailure.TIMEOUT,
    FailureReason.RATE_LIMIT: SummaryFailure.TIMEOUT,  # as Hermes classes a 429
}


def model_failure(reason: FailureReason) -> SummaryFailure:
    """The class of a summary call that raised a ``ModelError`` with ``reason``."""
    return _BY_REASON.get(reason, SummaryFailure.ERROR)


def aborts(failure: SummaryFailure, overloads_in_a_row: int) -> bool:
    """Whether ``failure`` aborts the compaction (``overloads_in_a_row`` counts this one)."""
    if failure is SummaryFailure.OVERLOADED:
        return overloads_in_a_row < OVERLOADS_BEFORE_DEGRADING
    return failure in ABORTING
