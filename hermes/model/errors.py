"""One classifier for every model-call failure, with recovery hints.

The rest of the daemon reads ``ModelError.reason`` and ``ModelError.hints``;
it never inspects exception types or messages. This module is the only place
that does, and it prefers structured fields (HTTP status, the API's
``error.type``) over text.
"""

from __future__ import annotations

import email.utils
import enum
import time
from typing import Any

import anthropic
import attrs
import httpx2


class FailureReason(enum.Enum):
    AUTH = "auth"
    BILLING = "billing"
    PERMISSION = "permission"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    TRANSPORT = "transport"
    STREAM_TRUNCATED = "stream_truncated"
    CONTEXT_OVERFLOW = "context_overflow"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    MODEL_NOT_FOUND = "model_not_found"
    REFUSAL = "refusal"
    INVALID_REQUEST = "invalid_request"
    MALFORMED_OUTPUT = "malformed_output"
    """The model's reply could not be used as sent (tool arguments that are not a JSON object)."""
    UNKNOWN = "unknown"


@attrs.frozen(slots=True)
class RecoveryHints:
    retryable: bool = False
    should_compress: bool = False
    should_fallback: bool = False
    retry_after: float | None = None
    """Seconds the provider asked us to wait, if it said."""
    final: bool = False
    """The provider said not to retry (``x-should-retry: false``): no auto-recovery either."""


_HINTS: dict[FailureReason, RecoveryHints] = {
    FailureReason.AUTH: RecoveryHints(),
    FailureReason.BILLING: RecoveryHints(should_fallback=True),
    FailureReason.PERMISSION: RecoveryHints(should_fallback=True),
    FailureReason.RATE_LIMIT: RecoveryHints(retryable=True, should_fallback=True),
    FailureReason.OVERLOADED: RecoveryHints(retryable=True, should_fallback=True),
    FailureReason.SERVER_ERROR: RecoveryHints(retryable=True, should_fallback=True),
    FailureReason.TIMEOUT: RecoveryHints(retryable=True, should_fallback=True),
    FailureReason.TRANSPORT: RecoveryHints(retryable=True),
    FailureReason.STREAM_TRUNCATED: RecoveryHints(retryable=True),
    FailureReason.CONTEXT_OVERFLOW: RecoveryHints(should_compress=True),
    FailureReason.PAYLOAD_TOO_LARGE: RecoveryHints(should_compress=True),
    FailureReason.MODEL_NOT_FOUND: RecoveryHints(should_fallback=True),
    FailureReason.REFUSAL: RecoveryHints(should_fallback=True),
    FailureReason.INVALID_REQUEST: RecoveryHints(),
    FailureReason.MALFORMED_OUTPUT: RecoveryHints(retryable=True),
    FailureReason.UNKNOWN: RecoveryHints(),
}


class ModelError(Exception):
    """A classified model-call failure."""

    def __init__(
        self,
        reason: FailureReason,
        message: str,
        *,
        hints: RecoveryHints | None = None,
        status: int | None = None,
        request_id: str | None = None,
        model: str | None = None,
        partial: Any = None,
    ) -> None:
        super().__init__(f"{reason.value}: {message}")
        self.reason = reason
        self.message = message
        self.hints = hints if hints is not None else _HINTS[reason]
        self.status = status
        self.request_id = request_id
        self.model = model
        self.partial = partial
        """What was received before the failure (a ``ModelResponse`` for a refusal)."""


class StreamProblem(Exception):
    """Raised inside an attempt for a stream that broke its contract; classified below."""

    def __init__(self, reason: FailureReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


_BY_TYPE: dict[str, FailureReason] = {
    "authentication_error": FailureReason.AUTH,
    "billing_error": FailureReason.BILLING,
    "permission_error": FailureReason.PERMISSION,
    "not_found_error": FailureReason.MODEL_NOT_FOUND,
    "request_too_large": FailureReason.PAYLOAD_TOO_LARGE,
    "rate_limit_error": FailureReason.RATE_LIMIT,
    "api_error": FailureReason.SERVER_ERROR,
    "timeout_error": FailureReason.TIMEOUT,
    "overloaded_error": FailureReason.OVERLOADED,
    "invalid_request_error": FailureReason.INVALID_REQUEST,
}

_BY_STATUS: dict[int, FailureReason] = {
    400: FailureReason.INVALID_REQUEST,
    401: FailureReason.AUTH,
    402: FailureReason.BILLING,
    403: FailureReason.PERMISSION,
    404: FailureReason.MODEL_NOT_FOUND,
    408: FailureReason.TIMEOUT,
    409: FailureReason.SERVER_ERROR,
    413: FailureReason.PAYLOAD_TOO_LARGE,
    429: FailureReason.RATE_LIMIT,
    504: FailureReason.TIMEOUT,
    529: FailureReason.OVERLOADED,
}

_CONTEXT_OVERFLOW_MARKERS = ("prompt is too long", "context window", "context length")


def retry_after_seconds(headers: Any, now: float | None = None) -> float | None:
    """``retry-after-ms`` (ms), else ``retry-after`` (seconds or an HTTP date), else None."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw).timestamp()
    except (TypeError, ValueError):
        return None
    return max(when - (now if now is not None else time.time()), 0.0)


def _status_reason(exc: anthropic.APIStatusError) -> FailureReason:
    error_type = getattr(exc, "type", None)
    status = exc.status_code
    if status == 400 or error_type == "invalid_request_error":
        text = str(getattr(exc, "api_message", None) or exc.message).lower()
        if any(marker in text for marker in _CONTEXT_OVERFLOW_MARKERS):
            return FailureReason.CONTEXT_OVERFLOW
    if isinstance(error_type, str) and error_type in _BY_TYPE:
        return _BY_TYPE[error_type]
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return FailureReason.SERVER_ERROR
    return FailureReason.UNKNOWN


def classify(exc: BaseException, model: str | None = None) -> ModelError:
    """Map any failure of a model call to a ``ModelError`` with hints."""
    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, StreamProblem):
        return ModelError(exc.reason, str(exc), model=model)
    if isinstance(exc, anthropic.APIStatusError):
        reason = _status_reason(exc)
        base = _HINTS[reason]
        response = getattr(exc, "response", None)
        retry_after = retry_after_seconds(response.headers if response is not None else None)
        should_retry = response.headers.get("x-should-retry") if response is not None else None
        retryable = base.retryable if should_retry is None else should_retry == "true"
        hints = attrs.evolve(
            base, retry_after=retry_after, retryable=retryable, final=should_retry == "false"
        )
        where = "mid-stream" if exc.status_code == 200 else f"HTTP {exc.status_code}"
        return ModelError(
            reason,
            f"{where}: {getattr(exc, 'api_message', None) or exc.message}",
            hints=hints,
            status=exc.status_code,
            request_id=getattr(exc, "request_id", None),
            model=model,
        )
    if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
        return ModelError(FailureReason.TIMEOUT, f"request timed out ({exc})", model=model)
    if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
        kind = type(exc.__cause__ or exc).__name__
        return ModelError(
            FailureReason.TRANSPORT, f"connection failed ({kind}: {exc})", model=model
        )
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ModelError(FailureReason.MALFORMED_OUTPUT, f"unusable response: {exc}", model=model)
    return ModelError(FailureReason.UNKNOWN, f"{type(exc).__name__}: {exc}", model=model)
