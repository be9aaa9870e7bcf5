"""Queries on the ``sessions`` table: creating, reading, listing and ending sessions.

Plain functions on an ``apsw.Connection``, run by ``queries.run_request`` in a
transaction (see ``queries.py``). The transcript queries use the helpers here
to find a session and to add token usage.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from typing import Any, cast

import apsw

from hermes.model.types import Usage

from .errors import InvalidRequest, SessionEnded, SessionExists, SessionNotFound
from .operations import Abort, operation
from .records import SessionInfo
from .requests import (
    AddUsage,
    CreateSession,
    EndSession,
    EndSessions,
    GetSession,
    ListSessions,
    ReopenSession,
    SetTitle,
)

MAX_LIMIT = 1000
"""Most rows a list or search returns."""

_SESSION_COLUMNS = (
    "id, parent_id, title, model, created_at, updated_at, ended_at, end_reason, message_count, "
    "input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, "
    "archive_of"
)


def _session_from_row(row: Sequence[Any]) -> SessionInfo:
    return SessionInfo(
        id=row[0],
        parent_id=row[1],
        title=row[2],
        model=row[3],
        created_at=float(row[4]),
        updated_at=float(row[5]),
        ended_at=None if row[6] is None else float(row[6]),
        end_reason=row[7],
        message_count=int(row[8]),
        usage=Usage(int(row[9]), int(row[10]), int(row[11]), int(row[12])),
        archive_of=row[13],
    )


def _find_session(conn: apsw.Connection, session_id: str) -> SessionInfo | None:
    row = conn.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).get
    if row is None:
        return None
    return _session_from_row(cast(Sequence[Any], row))


def session_row(conn: apsw.Connection, op: str, session_id: str) -> SessionInfo:
    check_id(op, "session_id", session_id)
    info = _find_session(conn, session_id)
    if info is None:
        raise SessionNotFound(op, f"no session with id {session_id!r}", session_id=session_id)
    return info


def open_session_row(conn: apsw.Connection, op: str, session_id: str) -> SessionInfo:
    """The session, which must not have ended (its transcript is closed then)."""
    info = session_row(conn, op, session_id)
    if info.ended_at is not None:
        raise SessionEnded(
            op,
            f"the session ended at {time.ctime(info.ended_at)} ({info.end_reason}); "
            "reopen it before writing to it",
            session_id=session_id,
        )
    return info


def check_id(op: str, field: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidRequest(op, f"{field} must be a non-empty str, got {value!r}")


def check_usage(op: str, usage: Usage | None, session_id: str) -> None:
    if usage is None:
        return
    for name in (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ):
        value = getattr(usage, name)
        if type(value) is not int or value < 0:
            raise InvalidRequest(
                op, f"usage.{name} must be an int >= 0, got {value!r}", session_id=session_id
            )


def charge_usage(
    conn: apsw.Connection,
    session_id: str,
    usage: Usage | None,
    now: float,
    message_count: int | None = None,
    only_if_count: int | None = None,
) -> bool:
    """Add ``usage`` and touch ``updated_at`` (and set ``message_count``): one statement.

    With ``only_if_count``, only while the open session still has that many
    messages (the guard of a ``TailCache`` claim); whether the row was changed.
    """
    u = usage or Usage()
    guard = "" if only_if_count is None else " AND message_count = ? AND ended_at IS NULL"
    conn.execute(
        "UPDATE sessions SET updated_at = ?, message_count = coalesce(?, message_count), "
        "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
        "cache_creation_input_tokens = cache_creation_input_tokens + ?, "
        "cache_read_input_tokens = cache_read_input_tokens + ? WHERE id = ?" + guard,
        (
            now,
            message_count,
            u.input_tokens,
            u.output_tokens,
            u.cache_creation_input_tokens,
            u.cache_read_input_tokens,
            session_id,
            *(() if only_if_count is None else (only_if_count,)),
        ),
    )
    return conn.changes() == 1


def new_session_id() -> str:
    """A fresh id: the UTC creation time (sortable) and a random suffix (unique)."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(4)


@operation(CreateSession)
def create_session(conn: apsw.Connection, req: CreateSession, abort: Abort) -> SessionInfo:
    op = req.op
    session_id = new_session_id() if req.session_id is None else req.session_id
    check_id(op, "session_id", session_id)
    check_id(op, "model", req.model)
    if req.title is not None and not isinstance(req.title, str):
        raise InvalidRequest(op, f"title must be a str or None, got {req.title!r}")
    if _find_session(conn, session_id) is not None:
        raise SessionExists(op, "a session with this id already exists", session_id=session_id)
    if req.parent_id is not None:
        check_id(op, "parent_id", req.parent_id)
        if _find_session(conn, req.parent_id) is None:
            raise SessionNotFound(
                op, f"parent session {req.parent_id!r} does not exist", session_id=session_id
            )
    now = time.time()
    conn.execute(
        "INSERT INTO sessions (id, parent_id, title, model, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (session_id, req.parent_id, req.title, req.model, now, now),
    )
    return session_row(conn, op, session_id)


@operation(AddUsage)
def add_usage(conn: apsw.Connection, req: AddUsage, abort: Abort) -> SessionInfo:
    session_row(conn, req.op, req.session_id)
    if not isinstance(req.usage, Usage):
        raise InvalidRequest(req.op, f"usage must be a Usage, got {type(req.usage).__name__}")
    check_usage(req.op, req.usage, req.session_id)
    charge_usage(conn, req.session_id, req.usage, time.time())
    return session_row(conn, req.op, req.session_id)


@operation(SetTitle)
def set_title(conn: apsw.Connection, req: SetTitle, abort: Abort) -> SessionInfo:
    session_row(conn, req.op, req.session_id)
    if req.title is not None and not isinstance(req.title, str):
        raise InvalidRequest(req.op, f"title must be a str or None, got {req.title!r}")
    conn.execute(
        "UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?",
        (req.title, time.time(), req.session_id),
    )
    return session_row(conn, req.op, req.session_id)


@operation(EndSession)
def end_session(conn: apsw.Connection, req: EndSession, abort: Abort) -> SessionInfo:
    open_session_row(conn, req.op, req.session_id)
    if not isinstance(req.reason, str) or not req.reason:
        raise InvalidRequest(req.op, f"reason must be a non-empty str, got {req.reason!r}")
    now = time.time()
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = ?, updated_at = ? WHERE id = ?",
        (now, req.reason, now, req.session_id),
    )
    return session_row(conn, req.op, req.session_id)


@operation(EndSessions)
def end_sessions(conn: apsw.Connection, req: EndSessions, abort: Abort) -> tuple[str, ...]:
    """End every session of ``req.session_ids`` still open; the ids it ended.

    Unknown and already-ended sessions are skipped, not refused: the caller is
    tidying up after a mass cancel and wants each open one closed.
    """
    if not isinstance(req.reason, str) or not req.reason:
        raise InvalidRequest(req.op, f"reason must be a non-empty str, got {req.reason!r}")
    if not isinstance(req.session_ids, tuple):
        raise InvalidRequest(req.op, f"session_ids must be a tuple, got {req.session_ids!r}")
    now = time.time()
    ended = []
    for session_id in req.session_ids:
        check_id(req.op, "session_id", session_id)
        abort.check(req.op)
        conn.execute(
            "UPDATE sessions SET ended_at = ?, end_reason = ?, updated_at = ? "
            "WHERE id = ? AND ended_at IS NULL",
            (now, req.reason, now, session_id),
        )
        if conn.changes():
            ended.append(session_id)
    return tuple(ended)


@operation(ReopenSession)
def reopen_session(conn: apsw.Connection, req: ReopenSession, abort: Abort) -> SessionInfo:
    info = session_row(conn, req.op, req.session_id)
    if info.archive_of is not None:
        raise InvalidRequest(
            req.op,
            f"session {req.session_id} is an archive of rows compacted out of session "
            f"{info.archive_of}; it cannot be reopened (resume {info.archive_of} instead)",
            session_id=req.session_id,
        )
    conn.execute(
        "UPDATE sessions SET ended_at = NULL, end_reason = NULL, updated_at = ? "
        "WHERE id = ? AND ended_at IS NOT NULL",
        (time.time(), req.session_id),
    )
    return session_row(conn, req.op, req.session_id)


@operation(GetSession)
def get_session(conn: apsw.Connection, req: GetSession, abort: Abort) -> SessionInfo:
    return session_row(conn, req.op, req.session_id)


def check_limit(op: str, limit: object) -> int:
    if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequest(op, f"limit must be an int from 1 to {MAX_LIMIT}, got {limit!r}")
    return limit


@operation(ListSessions)
def list_sessions(conn: apsw.Connection, req: ListSessions, abort: Abort) -> list[SessionInfo]:
    limit = check_limit(req.op, req.limit)
    where: list[str] = ["archive_of IS NULL"]
    args: list[Any] = []
    if req.parent_id is not None:
        where.append("parent_id = ?")
        args.append(req.parent_id)
    if not req.include_ended:
        where.append("ended_at IS NULL")
    clause = f"WHERE {' AND '.join(where)} " if where else ""
    rows = conn.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions {clause}ORDER BY updated_at DESC, id LIMIT ?",
        (*args, limit),
    )
    return [_session_from_row(row) for row in rows]
