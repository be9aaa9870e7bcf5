"""Frames on the wire, without the daemon's types (light: the CLI imports it).

See ``docs/protocol.md``.
"""

from __future__ import annotations

import json
from typing import Any

import msgpack  # type: ignore[import-untyped]

from hermes.text import text_problem, valid_data

MSGPACK = "hermes.msgpack"
JSON = "hermes.json"
SUBPROTOCOLS = (MSGPACK, JSON)


class ProtocolError(Exception):
    """A frame that is not a request; ``code`` goes on the wire."""

    def __init__(self, code: str, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id


def _unencodable(value: Any, where: str) -> str | None:
    """The first string in ``value`` (keys included) that is not valid Unicode, described."""
    if isinstance(value, str):
        problem = text_problem(value)
        return f"{where} holds {problem}" if problem else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            found = _unencodable(key, f"a key of {where or 'the request'}") or _unencodable(
                item, name if isinstance(key, str) and not text_problem(key) else where
            )
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _unencodable(item, f"{where}[{index}]")
            if found:
                return found
    return None


def notice(kind: str, session: str | None, payload: dict[str, Any]) -> dict[str, Any]:
    """An event that is not a session's own (``events.dropped``, ``events.replayed``)."""
    return {"type": kind, "session": session, "path": None, "seq": None, "payload": payload}


def error_frame(request_id: Any, code: str, message: str) -> dict[str, Any]:
    return {"id": request_id, "error": {"code": code, "message": message}}


def result_frame(request_id: Any, result: Any) -> dict[str, Any]:
    return {"id": request_id, "result": result}


def encode(frame: dict[str, Any], binary: bool) -> str | bytes:
    """``frame`` as one WebSocket message, always valid UTF-8.

    Requests with text that is not valid Unicode are refused (``decode``); a lone
    surrogate that reaches a frame from anywhere else (a model's output, an old row)
    goes out as U+FFFD, the same for every reader, never as text the socket cannot
    encode (which would drop the connection).
    """
    if binary:
        try:
            packed: bytes = msgpack.packb(frame, use_bin_type=True)
        except UnicodeEncodeError:
            packed = msgpack.packb(valid_data(frame), use_bin_type=True)
        return packed
    return json_text(frame)


def json_text(value: Any) -> str:
    """``value`` as compact JSON that is valid UTF-8 (lone surrogates as U+FFFD)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if text_problem(text) is not None:
        text = json.dumps(valid_data(value), ensure_ascii=False, separators=(",", ":"))
    return text


def _plain_id(request_id: Any) -> Any:
    """``request_id`` if it can be echoed as an id (a string or an integer), else None."""
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    return request_id


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
    problem = _unencodable(frame, "")
    if problem is not None:
        # The id itself may be the bad string: answer with id null rather than echo it.
        request_id = frame.get("id")
        if isinstance(request_id, str) and text_problem(request_id):
            request_id = None
        code = (
            "invalid_params"
            if problem.startswith(("params", "a key of params"))
            else ("invalid_request")
        )
        raise ProtocolError(code, f"{problem}: text must be valid Unicode", _plain_id(request_id))
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
