"""Frames on the wire, without the daemon's types (light: the CLI imports it).

See ``docs/protocol.md``.
"""

from __future__ import annotations

import json
from typing import Any

import msgpack  # type: ignore[import-untyped]

MSGPACK = "hermes.msgpack"
JSON = "hermes.json"
SUBPROTOCOLS = (MSGPACK, JSON)


class ProtocolError(Exception):
    """A frame that is not a request; ``code`` goes on the wire."""

    def __init__(self, code: str, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id


def notice(kind: str, session: str | None, payload: dict[str, Any]) -> dict[str, Any]:
    """An event that is not a session's own (``events.dropped``, ``events.replayed``)."""
    return {"type": kind, "session": session, "path": None, "seq": None, "payload": payload}


def error_frame(request_id: Any, code: str, message: str) -> dict[str, Any]:
    return {"id": request_id, "error": {"code": code, "message": message}}


def result_frame(request_id: Any, result: Any) -> dict[str, Any]:
    return {"id": request_id, "result": result}


def encode(frame: dict[str, Any], binary: bool) -> str | bytes:
    if binary:
        packed: bytes = msgpack.packb(frame, use_bin_type=True)
        return packed
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def decode(data: str | bytes, binary: bool) -> tuple[Any, str, dict[str, Any]]:
    """A request frame as ``(id, method, params)``; ``ProtocolError`` says what is wrong."""
    if binary:
        if isinstance(data, str):
            raise ProtocolError("parse_error", "this connection speaks msgpack: send binary frames")
        try:
            frame = msgpack.unpackb(data, raw=False, strict_map_key=False)
        except Exception as exc:
            raise ProtocolError(
                "parse_error", f"not valid msgpack: {type(exc).__name__}: {exc or 'bad format'}"
            ) from None
    else:
        if isinstance(data, bytes):
            raise ProtocolError(
                "parse_error",
                f"this connection speaks JSON text frames (ask for the {MSGPACK} subprotocol "
                "for binary frames)",
            )
        try:
            frame = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise ProtocolError("parse_error", f"not valid JSON: {exc}") from None
    if not isinstance(frame, dict):
        raise ProtocolError(
            "invalid_request",
            f"a request is an object {{id, method, params}}, got {type(frame).__name__}",
        )
    request_id = frame.get("id")
    if request_id is not None and (
        isinstance(request_id, bool) or not isinstance(request_id, int | str)
    ):
        raise ProtocolError(
            "invalid_request", f"id must be a string or an integer, got {type(request_id).__name__}"
        )
    extra = sorted(str(k) for k in frame if k not in ("id", "method", "params"))
    if extra:
        raise ProtocolError(
            "invalid_request", f"unknown request field(s): {', '.join(extra)}", request_id
        )
    method = frame.get("method")
    if not isinstance(method, str):
        raise ProtocolError(
            "invalid_request", f"method must be a string, got {type(method).__name__}", request_id
        )
    params = frame.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ProtocolError(
            "invalid_params", f"params must be an object, got {type(params).__name__}", request_id
        )
    return request_id, method, params
