"""The HTTP control API (same port, same token as the WebSocket).

| route | method |
|---|---|
| `GET /health` | `daemon.status` |
| `GET /sessions` / `POST /sessions` | `session.list` / `session.create` |
| `GET /sessions/{id}` | `session.get` |
| `POST /sessions/{id}/{prompt,steer,redirect,interrupt,cancel,close,resume,compress}` | the verb |
| `GET /sessions/{id}/events?since=N` | server-sent events (`Last-Event-ID` works too) |
| `GET /tree` | `tree.snapshot` |
| `POST /actors/cancel` `{"path": ...}` | `actor.cancel` |
| `GET /search?q=...` | `search` |
| `GET /processes`, `GET /sessions/{id}/processes` | `process.list` (all running sessions, or one) |
| `POST /sessions/{id}/processes/{process}/kill` | `process.kill` |
| `GET /sessions/{id}/subagents` | `subagent.list` |
| `POST /sessions/{id}/subagents/{subagent}/{steer,stop}` | `subagent.steer` / `subagent.stop` |
| `GET /subagents`, `POST /subagents/{pause,resume}` | `subagents.status`, `.pause`, `.resume` |
| `POST /sessions/{id}/approvals/{request_id}` `{"choice": ...}` | `approval.respond` |
| `GET /sessions/{id}/goal`, `POST /sessions/{id}/goal` (set) | `goal.get`, `goal.set` |
| `POST /sessions/{id}/goal/{pause,resume,clear,command}` | `goal.*` |
| `POST /sessions/{id}/loop` (set), `POST /sessions/{id}/loop/{pause,resume,stop}` | `loop.*` |
| `GET /memory`, `GET /memory/pending` | `memory.show`, `memory.pending` |
| `POST /memory/pending/{proposal}/{approve,reject}` | `memory.approve` / `memory.reject` |
| `GET /checkpoints?dir=`, `GET /checkpoints/diff?dir=&number=` | `checkpoint.list`, `.diff` |
| `POST /checkpoints/restore` `{"dir": ..., "number": ..., "session": ...}` | `checkpoint.restore` |
| `GET /cron`, `POST /cron`, `GET /cron/{job}`, `GET /cron/{job}/runs` | `cron.*` |
| `POST /cron/{job}/{edit,pause,resume,run,rm}` | `cron.*` |
| `GET /skills[?cwd=]`, `GET /skills/{name}[?cwd=]` | `skills.list`, `skills.show` |
| `POST /skills/install`, `POST /skills/trust`, `POST /skills/{name}/remove` | `skills.*` |
| `GET /skills/.pending`, `POST /skills/.pending/{change}/{approve,reject}` | `skills.*` |

Bodies are JSON objects (the method's params), at most ``max_body_bytes``.
One request per connection (``Connection: close``).

Every write has a deadline (``WRITE_TIMEOUT``): a client that does not take a
response, or one server-sent event, within it is dropped with a reset. An
event stream is written by one task, one whole event per write; keepalive
comments go only between events, when none came for ``gateway.sse_keepalive``
seconds.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import struct
from typing import Any

import trio

from hermes.daemon.settings import Settings

from . import protocol
from .cron_methods import cron_route
from .frames import json_text
from .goal_methods import goal_route
from .kanban_methods import kanban_route
from .methods import Methods, error_code
from .replay import from_store, ring_frame
from .skills_methods import skills_route
from .spawn_methods import spawn_route
from .wire_http import RequestHead, error_response, json_body, response_bytes

log = logging.getLogger("hermes.gateway.http")

BODY_TIMEOUT = 10.0
WRITE_TIMEOUT = 10.0
"""A client that takes longer than this to accept one response or event is dropped
(as the WebSocket writer drops one that does not take a frame)."""

_STATUS = {
    "invalid_params": 400,
    "bad_request": 400,
    "parse_error": 400,
    "unknown_method": 404,
    "not_found": 404,
    "unknown_session": 404,
    "busy": 409,
    "queue_full": 409,
    "no_turn": 409,
    "session_closed": 409,
    "unknown_approval": 404,
    "already_answered": 409,
    "unknown_subagent": 404,
    "subagent_error": 409,
    "unknown_process": 404,
    "process_error": 409,
    "checkpoint_error": 409,
    "timeout": 504,
    "overloaded": 503,
    "shutting_down": 503,
    "unavailable": 503,
    # the memory errors' reasons (hermes/memory/errors.py)
    "proposal_not_found": 404,
    "invalid_entry": 400,
    "unsafe_entry": 400,
    "stale_proposal": 409,
    "memory_full": 409,
    "no_match": 409,
    "ambiguous_match": 409,
    "duplicate_entry": 409,
    "too_many_proposals": 409,
    "draft_closed": 409,
    "locked": 503,
    "unreadable": 500,
    "memory_error": 500,
    # refused skill operations (hermes/gateway/skills_methods.py)
    "unknown_skill": 404,
    "unknown_change": 404,
    "skill_exists": 409,
    "skill_locked": 409,
    "invalid_skill": 400,
    "unsafe_skill": 400,
    "needs_force": 409,
    "quarantined": 409,
}


def http_status(code: str) -> int:
    """The HTTP status of an error code (500 for a code with no status of its own)."""
    return _STATUS.get(code, 500)


_VERBS = {
    "prompt": "prompt.submit",
    "steer": "steer",
    "redirect": "redirect",
    "interrupt": "interrupt",
    "cancel": "cancel",
    "close": "session.close",
    "resume": "session.resume",
    "compress": "session.compress",
}


async def serve_http(
    stream: trio.SocketStream,
    head: RequestHead,
    rest: bytes,
    methods: Methods,
    settings: Settings,
) -> None:
    max_body: int = settings.config.get("gateway", "max_body_bytes")
    try:
        body = await _read_body(stream, head, rest, max_body)
        route = _route(head, body)
    except _HttpError as exc:
        await _write(stream, error_response(exc.status, exc.code, str(exc)))
        return
    if route is None:
        await _write(
            stream, error_response(404, "not_found", f"no route {head.method} {head.path}")
        )
        return
    method, params = route
    if method == "events.stream":
        await _sse(stream, head, params, methods)
        return
    try:
        result = await methods.call(method, params)
        data = response_bytes(200, json_body({"result": result}))
    except Exception as exc:
        code = error_code(exc)
        if code == "internal":
            log.error("%s failed", method, exc_info=exc)
        data = error_response(http_status(code), code, str(exc) or type(exc).__name__)
    await _write(stream, data)


async def _write(stream: trio.SocketStream, data: bytes) -> bool:
    """Send ``data`` whole within ``WRITE_TIMEOUT``; False when the client was dropped.

    A send cut off by the deadline leaves part of ``data`` on the wire, so
    nothing may follow it: the connection is reset (``SO_LINGER`` 0 makes its
    close discard what the kernel still holds for a reader that does not read).
    """
    with trio.move_on_after(WRITE_TIMEOUT) as scope:
        await stream.send_all(data)
    if not scope.cancelled_caught:
        return True
    log.warning(
        "HTTP client did not take a write of %d bytes within %.0f s: dropped",
        len(data),
        WRITE_TIMEOUT,
    )
    with contextlib.suppress(OSError):  # already gone: nothing left to discard
        stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return False


class _HttpError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


async def _read_body(
    stream: trio.SocketStream, head: RequestHead, rest: bytes, max_body: int
) -> dict[str, Any]:
    if head.header("transfer-encoding"):
        raise _HttpError(411, "bad_request", "send a Content-Length body (no chunked encoding)")
    length_text = head.header("content-length") or "0"
    try:
        length = int(length_text)
    except ValueError:
        raise _HttpError(400, "bad_request", f"bad Content-Length {length_text!r}") from None
    if length < 0:
        raise _HttpError(400, "bad_request", f"bad Content-Length {length_text!r}")
    if length > max_body:
        raise _HttpError(
            413, "body_too_large", f"body of {length} bytes is over the limit of {max_body}"
        )
    body = bytearray(rest[:length])
    with trio.move_on_after(BODY_TIMEOUT) as scope:
        while len(body) < length:
            chunk = await stream.receive_some(min(65536, length - len(body)))
            if not chunk:
                raise _HttpError(400, "bad_request", "body shorter than its Content-Length")
            body += chunk
    if scope.cancelled_caught:
        raise _HttpError(408, "timeout", "request body too slow")
    if not body:
        return {}
    try:
        value = json.loads(bytes(body))
    except (ValueError, RecursionError) as exc:
        raise _HttpError(400, "parse_error", f"body is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _HttpError(400, "invalid_params", "body must be a JSON object")
    return value


_MCP_VERBS = {"test": "mcp.test", "enable": "mcp.enable", "disable": "mcp.disable"}


def _route(head: RequestHead, body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    parts = [p for p in head.path.split("/") if p]
    verb = head.method
    if verb == "GET" and parts == ["health"]:
        return "daemon.status", {}
    if verb == "GET" and parts == ["tree"]:
        return "tree.snapshot", {}
    if verb == "GET" and parts == ["search"]:
        query = head.query_one("q") or ""
        return "search", {"query": query}
    if parts == ["sessions"]:
        if verb == "GET":
            return "session.list", {}
        if verb == "POST":
            return "session.create", body
    if verb == "POST" and parts == ["actors", "cancel"]:
        return "actor.cancel", body
    if verb == "GET" and parts == ["processes"]:
        return "process.list", {}
    if verb == "GET" and parts == ["mcp"]:
        return "mcp.list", {}
    if verb == "POST" and len(parts) == 3 and parts[0] == "mcp" and parts[2] in _MCP_VERBS:
        return _MCP_VERBS[parts[2]], {"name": parts[1]}
    if (  # POST /sessions/{id}/mcp/{name}/enable (or disable): that server in that session
        verb == "POST"
        and len(parts) == 5
        and parts[0] == "sessions"
        and parts[2] == "mcp"
        and parts[4] in ("enable", "disable")
    ):
        return f"mcp.session_{parts[4]}", {"session": parts[1], "name": parts[3]}
    if parts and parts[0] == "cron":
        return cron_route(verb, parts[1:], body)
    if parts and parts[0] == "kanban":
        return kanban_route(verb, parts[1:], body)
    if parts and parts[0] == "memory":
        return _memory_route(verb, parts[1:])
    if parts and parts[0] == "skills":
        return skills_route(verb, parts[1:], body, head.query_one("cwd"))
    if parts and parts[0] == "checkpoints":
        return _checkpoint_route(head, verb, parts[1:], body)
    if parts and parts[0] == "subagents":
        return spawn_route(verb, parts[1:])
    if len(parts) >= 2 and parts[0] == "sessions":
        session = parts[1]
        owned = _owned_route(verb, parts[2:], body, session)
        if owned is not None:
            return owned
        if len(parts) == 2 and verb == "GET":
            return "session.get", {"session": session}
        if len(parts) == 3 and verb == "POST" and parts[2] in _VERBS:
            return _VERBS[parts[2]], {**body, "session": session}
        if len(parts) == 3 and verb == "GET" and parts[2] == "events":
            since = head.query_one("since") or head.header("last-event-id")
            params: dict[str, Any] = {"session": session}
            if since is not None:
                try:
                    params["since"] = int(since)
                except ValueError:
                    raise _HttpError(
                        400, "invalid_params", f"since must be an integer, got {since!r}"
                    ) from None
            return "events.stream", params
    return None


def _checkpoint_route(
    head: RequestHead, verb: str, rest: list[str], body: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """``GET /checkpoints?dir=``, ``GET /checkpoints/diff?dir=&number=``, ``POST .../restore``."""
    if verb == "POST" and rest == ["restore"]:
        return "checkpoint.restore", body
    if verb != "GET" or rest not in ([], ["diff"]):
        return None
    params: dict[str, Any] = {"dir": head.query_one("dir") or ""}
    number = head.query_one("number")
    if rest == ["diff"] and number is not None:
        try:
            params["number"] = int(number)
        except ValueError:
            raise _HttpError(
                400, "invalid_params", f"number must be an integer, got {number!r}"
            ) from None
    return ("checkpoint.diff" if rest else "checkpoint.list"), params


def _memory_route(verb: str, rest: list[str]) -> tuple[str, dict[str, Any]] | None:
    if verb == "GET" and rest == []:
        return "memory.show", {}
    if verb == "GET" and rest == ["pending"]:
        return "memory.pending", {}
    approving = len(rest) == 3 and rest[0] == "pending" and rest[2] in ("approve", "reject")
    if verb == "POST" and approving:
        return f"memory.{rest[2]}", {"proposal": rest[1]}
    return None


def _owned_route(
    verb: str, rest: list[str], body: dict[str, Any], session: str
) -> tuple[str, dict[str, Any]] | None:
    """A session's processes, subagents, approvals, goal and loop."""
    goal = goal_route(verb, rest, body, session)
    if goal is not None:
        return goal
    if rest == ["processes"] and verb == "GET":
        return "process.list", {"session": session}
    if rest == ["subagents"] and verb == "GET":
        return "subagent.list", {"session": session}
    if verb != "POST" or len(rest) < 2:
        return None
    if rest[0] == "processes" and len(rest) == 3 and rest[2] == "kill":
        return "process.kill", {**body, "session": session, "process": rest[1]}
    if rest[0] == "subagents" and len(rest) == 3 and rest[2] in ("steer", "stop"):
        return f"subagent.{rest[2]}", {**body, "session": session, "subagent": rest[1]}
    if rest[0] == "approvals" and len(rest) == 2:
        try:
            request_id = int(rest[1])
        except ValueError:
            raise _HttpError(
                400, "invalid_params", f"request id must be an integer, got {rest[1]!r}"
            ) from None
        return "approval.respond", {**body, "session": session, "request_id": request_id}
    return None


async def _sse(
    stream: trio.SocketStream, head: RequestHead, params: dict[str, Any], methods: Methods
) -> None:
    """The event stream: replay, then live events, from this one task.

    Only the wait for the next event is bounded by the keepalive interval; the
    write of an event is never cut by it (it has its own deadline in ``_write``),
    so a keepalive can only follow a whole event.
    """
    try:
        entry = await methods.s.manager.lookup(params["session"])
    except Exception as exc:
        code = error_code(exc)
        await _write(stream, error_response(http_status(code), code, str(exc)))
        return
    settings = methods.s.settings
    capacity: int = settings.config.get("gateway", "client_queue")
    keepalive: float = settings.config.get("gateway", "sse_keepalive")
    since = params.get("since")
    start = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
        b"Connection: close\r\n\r\n"
    )
    with entry.hub.subscribe_since(since, capacity) as (replay, sub):
        hello = f": session {entry.session_id} epoch {settings.boot_id}\n\n".encode()
        if not await _write(stream, start + hello):
            return
        stored, missed = await from_store(methods.s.store, entry, since, replay)
        if missed:
            stored.insert(0, protocol.notice("events.dropped", entry.session_id, {"count": missed}))
        for frame in [*stored, *(ring_frame(item, entry) for item in replay.events)]:
            if not await _write(stream, _sse_frame(frame)):
                return
        while True:
            data = b": keepalive\n\n"
            with trio.move_on_after(keepalive):
                try:
                    event = await sub.receive.receive()
                except trio.EndOfChannel:
                    return
                data = _sse_frame(protocol.event_frame(event, entry.path))
            if not await _write(stream, data):
                return


def _sse_frame(frame: dict[str, Any]) -> bytes:
    data = json_text(frame)  # valid UTF-8 whatever the payload holds
    seq = frame.get("seq")
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}event: {frame['type']}\ndata: {data}\n\n".encode()
