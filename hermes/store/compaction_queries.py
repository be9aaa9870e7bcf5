"""Compacting a transcript: the new rows in, the old rows archived, in one transaction.

A compaction never deletes a message. The rows it replaces move, unchanged
(same row ids, so the full-text index still finds them), to a new *archive*
session whose ``archive_of`` names the live one; the compacted transcript is
written to the live session from seq 0; a ``compactions`` row links the two.
The archive is ended at once and cannot be reopened or written to.
"""

from __future__ import annotations

import time
from typing import Any

import apsw

from .errors import InvalidRequest, SeqConflict
from .operations import Abort, operation
from .records import CompactionRecord
from .requests import Compact, ListCompactions
from .rows import check_messages, encode_message, record_tools, validate_next
from .session_queries import (
    charge_usage,
    check_limit,
    check_usage,
    open_session_row,
    session_row,
)
from .validate import Tail, searchable_text
from .writer_queries import check_writer

_COLUMNS = (
    "id, session_id, archive_id, created_at, method, focus, messages_before, messages_after, "
    "tokens_before, tokens_after"
)


def _record(row: Any) -> CompactionRecord:
    return CompactionRecord(
        id=int(row[0]),
        session_id=row[1],
        archive_id=row[2],
        created_at=float(row[3]),
        method=row[4],
        focus=row[5],
        messages_before=int(row[6]),
        messages_after=int(row[7]),
        tokens_before=int(row[8]),
        tokens_after=int(row[9]),
    )


def _check(req: Compact) -> None:
    op, session_id = req.op, req.session_id
    if not req.messages:
        raise InvalidRequest(op, "a compacted transcript cannot be empty", session_id=session_id)
    if not isinstance(req.method, str) or not req.method:
        raise InvalidRequest(op, f"method must be a non-empty str, got {req.method!r}")
    if req.focus is not None and not isinstance(req.focus, str):
        raise InvalidRequest(op, f"focus must be a str or None, got {req.focus!r}")
    for name in ("expected_count", "tokens_before", "tokens_after"):
        value = getattr(req, name)
        if type(value) is not int or value < 0:
            raise InvalidRequest(op, f"{name} must be an int >= 0, got {value!r}")
    check_messages(op, session_id, req.messages)
    check_usage(op, req.usage, session_id)


@operation(Compact)
def compact(conn: apsw.Connection, req: Compact, abort: Abort) -> CompactionRecord:
    op, session_id = req.op, req.session_id
    _check(req)
    check_writer(conn, op, session_id, req.writer)
    info = open_session_row(conn, op, session_id)
    if info.message_count != req.expected_count:
        raise SeqConflict(
            op,
            f"the compaction was planned on {req.expected_count} messages but the transcript "
            f"now has {info.message_count}",
            session_id=session_id,
            expected=req.expected_count,
            actual=info.message_count,
        )
    tail = Tail.empty()
    encoded: list[bytes] = []
    for message in req.messages:
        tail = validate_next(op, session_id, tail, message)
        encoded.append(encode_message(op, session_id, tail.next_seq - 1, message))
    abort.check(op)
    number = conn.execute(
        "SELECT count(*) FROM compactions WHERE session_id = ?", (session_id,)
    ).get
    archive_id = f"{session_id}~c{int(number or 0) + 1}"
    now = time.time()
    conn.execute(
        "INSERT INTO sessions (id, parent_id, title, model, created_at, updated_at, ended_at, "
        "end_reason, message_count, archive_of) VALUES (?, NULL, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            archive_id,
            info.title,
            info.model,
            info.created_at,
            now,
            now,
            "compacted",
            info.message_count,
            session_id,
        ),
    )
    conn.execute(
        "UPDATE messages SET session_id = ? WHERE session_id = ?", (archive_id, session_id)
    )
    conn.execute(
        "UPDATE tool_calls SET session_id = ? WHERE session_id = ?", (archive_id, session_id)
    )
    for seq, (message, blob) in enumerate(zip(req.messages, encoded, strict=True)):
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, content, text, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, seq, message.role, blob, searchable_text(message), now),
        )
        record_tools(conn, op, session_id, seq, message)
    charge_usage(conn, session_id, req.usage, now, message_count=len(req.messages))
    conn.execute(
        "INSERT INTO compactions (session_id, archive_id, created_at, method, focus, "
        "messages_before, messages_after, tokens_before, tokens_after) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            archive_id,
            now,
            req.method,
            req.focus,
            info.message_count,
            len(req.messages),
            req.tokens_before,
            req.tokens_after,
        ),
    )
    row = conn.execute(f"SELECT {_COLUMNS} FROM compactions WHERE id = last_insert_rowid()").get
    return _record(row)


@operation(ListCompactions)
def list_compactions(
    conn: apsw.Connection, req: ListCompactions, abort: Abort
) -> list[CompactionRecord]:
    limit = check_limit(req.op, req.limit)
    session_row(conn, req.op, req.session_id)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM compactions WHERE session_id = ? ORDER BY id LIMIT ?",
        (req.session_id, limit),
    )
    return [_record(row) for row in rows]
