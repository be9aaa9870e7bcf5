"""The failure classifier: every failure maps to a reason with recovery hints."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import pytest

from hermes.model import FailureReason, ModelError, classify, retry_after_seconds
from hermes.model.errors import StreamProblem

REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/v1/messages")

ERROR_CLASSES: dict[int, type[anthropic.APIStatusError]] = {
    400: anthropic.BadRequestError,
    401: anthropic.AuthenticationError,
    402: anthropic.PaymentRequiredError,
    403: anthropic.PermissionDeniedError,
    404: anthropic.NotFoundError,
    413: anthropic.RequestTooLargeError,
    429: anthropic.RateLimitError,
    500: anthropic.InternalServerError,
    504: anthropic.InternalServerError,
    529: anthropic.OverloadedError,
}


def status_error(
    status: int, error_type: str, message: str = "boom", headers: dict[str, str] | None = None
) -> anthropic.APIStatusError:
    body: dict[str, Any] = {"type": "error", "error": {"type": error_type, "message": message}}
    response = httpx2.Response(status, headers=headers or {}, json=body, request=REQUEST)
    cls = ERROR_CLASSES.get(status, anthropic.APIStatusError)
    return cls(message, response=response, body=body)


@pytest.mark.parametrize(
    ("status", "error_type", "reason", "retryable", "compress", "fallback"),
    [
        (401, "authentication_error", FailureReason.AUTH, False, False, False),
        (402, "billing_error", FailureReason.BILLING, False, False, True),
        (403, "permission_error", FailureReason.PERMISSION, False, False, True),
        (404, "not_found_error", FailureReason.MODEL_NOT_FOUND, False, False, True),
        (413, "request_too_large", FailureReason.PAYLOAD_TOO_LARGE, False, True, False),
        (429, "rate_limit_error", FailureReason.RATE_LIMIT, True, False, True),
        (500, "api_error", FailureReason.SERVER_ERROR, True, False, True),
        (504, "timeout_error", FailureReason.TIMEOUT, True, False, True),
        (529, "overloaded_error", FailureReason.OVERLOADED, True, False, True),
        (400, "invalid_request_error", FailureReason.INVALID_REQUEST, False, False, False),
        (418, "teapot_error", FailureReason.UNKNOWN, False, False, False),
        (503, "something_new", FailureReason.SERVER_ERROR, True, False, True),
    ],
)
def test_status_errors_map_to_reasons_and_hints(
    status: int,
    error_type: str,
    reason: FailureReason,
    retryable: bool,
    compress: bool,
    fallback: bool,
) -> None:
    error = classify(status_error(status, error_type), model="m")
    assert error.reason is reason
    assert error.status == status
    assert error.model == "m"
    assert (error.hints.retryable, error.hints.should_compress, error.hints.should_fallback) == (
        retryable,
        compress,
        fallback,
    )


def test_prompt_too_long_is_a_context_overflow_that_asks_for_compression() -> None:
    exc = status_error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000")
    error = classify(exc)
    assert error.reason is FailureReason.CONTEXT_OVERFLOW
    assert error.hints.should_compress and not error.hints.retryable


def test_mid_stream_error_event_is_classified_by_its_type() -> None:
    error = classify(status_error(200, "overloaded_error", "Overloaded"))
    assert error.reason is FailureReason.OVERLOADED
    assert error.hints.retryable
    assert "mid-stream" in error.message


def test_retry_after_headers_become_the_hint() -> None:
    ms = classify(status_error(429, "rate_limit_error", headers={"retry-after-ms": "250"}))
    assert ms.hints.retry_after == pytest.approx(0.25)
    seconds = classify(status_error(529, "overloaded_error", headers={"retry-after": "3"}))
    assert seconds.hints.retry_after == pytest.approx(3.0)
    none = classify(status_error(500, "api_error"))
    assert none.hints.retry_after is None


def test_x_should_retry_overrides_the_default() -> None:
    never = classify(status_error(529, "overloaded_error", headers={"x-should-retry": "false"}))
    assert not never.hints.retryable
    always = classify(
        status_error(400, "invalid_request_error", headers={"x-should-retry": "true"})
    )
    assert always.hints.retryable


def test_transport_and_timeout_failures() -> None:
    dropped = classify(httpx2.RemoteProtocolError("peer closed connection", request=REQUEST))
    assert dropped.reason is FailureReason.TRANSPORT and dropped.hints.retryable
    timed_out = classify(anthropic.APITimeoutError(request=REQUEST))
    assert timed_out.reason is FailureReason.TIMEOUT and timed_out.hints.retryable
    refused = classify(anthropic.APIConnectionError(request=REQUEST))
    assert refused.reason is FailureReason.TRANSPORT


def test_stream_problems_keep_their_reason() -> None:
    error = classify(StreamProblem(FailureReason.STREAM_TRUNCATED, "no message_stop"))
    assert error.reason is FailureReason.STREAM_TRUNCATED and error.hints.retryable
    malformed = classify(StreamProblem(FailureReason.MALFORMED_OUTPUT, "bad json"))
    assert malformed.reason is FailureReason.MALFORMED_OUTPUT


def test_anything_else_is_unknown_and_a_model_error_passes_through() -> None:
    error = classify(RuntimeError("what"))
    assert error.reason is FailureReason.UNKNOWN and "RuntimeError: what" in error.message
    assert classify(error) is error
    assert isinstance(error, ModelError)


def test_retry_after_parsing() -> None:
    assert retry_after_seconds(
        {"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0
    ) == (pytest.approx(10.0))
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({"retry-after-ms": "x", "retry-after": "2"}) == 2.0
    assert retry_after_seconds(None) is None
