"""Byte-level pieces of the Messages API wire format: JSON, SSE events, error bodies.

Everything here is a pure function over plain data, so the HTTP layer and the
renderer share one definition of what goes on the wire (reference §4).
"""

from __future__ import annotations

import json
from typing import Any

#: ``error.type`` for each HTTP status, as the real API sends it.
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "timeout_error",
    409: "invalid_request_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

#: Default ``error.message`` for each ``error.type``.
ERROR_MESSAGES: dict[str, str] = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low to access the Anthropic API.",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "api_error": "Internal server error",
    "timeout_error": "Request timed out",
    "overloaded_error": "Overloaded",
}

#: Reason phrases for the statuses the fake sends (h11 needs one; clients ignore it).
REASONS: dict[int, bytes] = {
    200: b"OK",
    400: b"Bad Request",
    401: b"Unauthorized",
    402: b"Payment Required",
    403: b"Forbidden",
    404: b"Not Found",
    405: b"Method Not Allowed",
    408: b"Request Timeout",
    409: b"Conflict",
    413: b"Payload Too Large",
    422: b"Unprocessable Entity",
    429: b"Too Many Requests",
    500: b"Internal Server Error",
    502: b"Bad Gateway",
    503: b"Service Unavailable",
    504: b"Gateway Timeout",
    529: b"Overloaded",
}

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_escaping = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON, the way the API writes it.

    Text that is not valid UTF-8 (a scripted lone surrogate) goes out as the
    ``\\uXXXX`` escape a JSON writer would use, so tests can send what a
    misbehaving upstream might.
    """
    text = _encoder.encode(obj)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _escaping.encode(obj).encode()


def error_type_for(status: int) -> str:
    """The ``error.type`` the API uses for ``status`` (``api_error`` for unknown 5xx)."""
    found = ERROR_TYPES.get(status)
    if found is not None:
        return found
    return "api_error" if status >= 500 else "invalid_request_error"


def error_body(
    status: int,
    request_id: str,
    *,
    message: str | None = None,
    error_type: str | None = None,
    error_code: str | None = None,
) -> bytes:
    """The JSON error body: ``{"type":"error","error":{...},"request_id":...}``."""
    etype = error_type or error_type_for(status)
    err: dict[str, Any] = {
        "type": etype,
        "message": message if message is not None else ERROR_MESSAGES.get(etype, "Error"),
    }
    if error_code is not None:
        err["details"] = {"error_code": error_code}
    return dumps({"type": "error", "error": err, "request_id": request_id})


def sse_event(name: str, data: Any) -> bytes:
    """One SSE event: an ``event:`` line, a ``data:`` line and a blank line."""
    return b"event: " + name.encode() + b"\ndata: " + dumps(data) + b"\n\n"


#: The ``ping`` event, prebuilt.
PING = sse_event("ping", {"type": "ping"})

#: The ``message_stop`` event, prebuilt.
MESSAGE_STOP = sse_event("message_stop", {"type": "message_stop"})


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> bytes:
    """An in-stream ``event: error`` (the API sends it after a 200 and ends the stream)."""
    return sse_event("error", {"type": "error", "error": {"type": error_type, "message": message}})


def reason(status: int) -> bytes:
    """A reason phrase for ``status``."""
    return REASONS.get(status, b"Status")
