"""The store's transactions, and the SQL of its transcripts, synchronous, on an ``apsw.Connection``.

Each request's function is registered with ``operations.operation`` in its
query module (this one for appends, rewrites, truncation, loads and search);
``run_request`` looks it up by the request's type.

``run_request`` runs a request in a transaction of its own (``BEGIN IMMEDIATE``
for writes, so the write lock is taken up front; a deferred ``BEGIN`` for
reads, which gives them one consistent snapshot) and commits before it
returns. Any exception rolls the transaction back, so a request is applied
entirely or not at all. The store actor runs these in its connection's worker
thread; tests can call them on an ordinary connection.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, cast

import apsw

from hermes.codec import CodecError, unpack_blocks
from hermes.model.types import Message, Role

from . import (  # noqa: F401  (imported for their operations, registered as they load)
    compaction_queries,
    cooldown_queries,
    cron_queries,
    delegation_queries,
    event_queries,
    flag_queries,
    goal_queries,
    kanban_queries,
    process_queries,
    prompt_queries,
    session_queries,
    writer_queries,
)
from .errors import (
    CorruptRecord,
    InvalidRequest,
    InvalidTranscript,
    SeqConflict,
)
from .operations import Abort, Operation, operation, operation_for
from .records import AppendResult, SearchHit, Transcript
from .requests import (
    AppendMessages,
    IndexPending,
    LoadSession,
    ReplaceLast,
    Request,
    Search,
    Truncate,
)
from .rows import (
    check_messages,
    check_new_tool_uses,
    encode_message,
    record_tools,
    validate_next,
)
from .session_queries import (
    charge_usage,
    check_limit,
    check_usage,
    open_session_row,
    session_row,
)
from .tails import TailCache
from .validate import Tail, searchable_text
from .writer_queries import check_writer

# -- transactions ----------------------------------------------------------------------

_CHECK_EVERY = 64
"""Messages handled between two looks at the abort flag."""


def run_request(
    conn: apsw.Connection,
    request: Request[Any],
    abort: Abort | None = None,
    tails: TailCache | None = None,
) -> Any:
    """Run ``request`` in its own transaction, committed before this returns.

    ``tails``: the connection's ``TailCache``, kept in step with its writes.
    """
    handler = operation_for(request)
    if handler is None:
        raise InvalidRequest(request.op, f"no handler for {type(request).__name__}")
    if abort is None:
        abort = Abort()
    if not conn.get_autocommit():
        # A request interrupted inside SQLite (cancelled, or its rollback failed)
        # left a transaction open: it never committed, so drop it.
        conn.execute("ROLLBACK")
    conn.execute("BEGIN IMMEDIATE" if request.writes else "BEGIN")
    try:
        result = _handle(conn, request, abort, tails, handler)
        abort.check(request.op)
        conn.execute("COMMIT")
    except BaseException as exc:
        if tails is not None:
            tails.clear()
        if not conn.get_autocommit():
            try:
                conn.execute("ROLLBACK")
            except apsw.Error as rollback_error:
                exc.add_note(f"rollback failed too: {rollback_error}")
        raise
    if tails is not None:
        tails.commit()
    return result


def _handle(
    conn: apsw.Connection,
    request: Request[Any],
    abort: Abort,
    tails: TailCache | None,
    handler: Operation,
) -> Any:
    """Run the operation; one that keeps ``tails`` gets it, any other write that
    ``moves_tails`` forgets the session's entry first."""
    if tails is not None:
        if handler.tails:
            return handler.run(conn, request, abort, tails)
        if request.writes and request.moves_tails:
            tails.forget(getattr(request, "session_id", None))
    return handler.run(conn, request, abort)


def run_requests_grouped(
    conn: apsw.Connection,
    requests: Sequence[Request[Any]],
    is_fatal: Callable[[BaseException], bool],
    tails: TailCache | None = None,
) -> list[tuple[bool, Any]]:
    """Run small writes in one transaction, each in its own savepoint: one commit for all.

    Returns ``(True, result)`` or ``(False, error)`` per request: a request that
    fails is rolled back alone and the others commit. An error ``is_fatal``
    names (the connection is in trouble) rolls the whole group back and is
    raised, as is a failed commit.
    """
    if not conn.get_autocommit():
        conn.execute("ROLLBACK")
    conn.execute("BEGIN IMMEDIATE")
    out: list[tuple[bool, Any]] = []
    try:
        for request in requests:
            handler = operation_for(request)
            if handler is None:
                name = type(request).__name__
                out.append((False, InvalidRequest(request.op, f"no handler for {name}")))
                continue
            conn.execute("SAVEPOINT request")
            try:
                result = _handle(conn, request, Abort(), tails, handler)
            except Exception as exc:
                if tails is not None:
                    tails.clear()  # what the group staged so far is not trusted either
                if is_fatal(exc):
                    raise
                conn.execute("ROLLBACK TO request")
                conn.execute("RELEASE request")
                out.append((False, exc))
            else:
                conn.execute("RELEASE request")
                out.append((True, result))
        conn.execute("COMMIT")
    except BaseException as exc:
        if tails is not None:
            tails.clear()
        if not conn.get_autocommit():
            try:
                conn.execute("ROLLBACK")
            except apsw.Error as rollback_error:
                exc.add_note(f"rollback failed too: {rollback_error}")
        raise
    if tails is not None:
        tails.commit()
    return out


# -- rows ------------------------------------------------------------------------------


def _tail(conn: apsw.Connection, session_id: str, before_seq: int) -> Tail:
    """The transcript's end as seen by a message placed at ``before_seq``."""
    if before_seq == 0:
        return Tail.empty()
    role = conn.execute(
        "SELECT role FROM messages WHERE session_id = ? AND seq = ?", (session_id, before_seq - 1)
    ).get
    # One query for both: the uses of the last message are all still open at
    # ``before_seq`` (a result answers the message just before it, so comes later).
    # Only the last assistant message (``before_seq`` - 1 or - 2) can have open
    # uses: an assistant message is refused while earlier uses are open. So the
    # range is a few rows of the index, however long the session.
    rows = list(
        conn.execute(
            "SELECT tool_use_id, use_seq FROM tool_calls WHERE session_id = ? "
            "AND use_seq >= ? AND use_seq < ? "
            "AND (result_seq IS NULL OR result_seq >= ?) ORDER BY use_seq, block",
            (session_id, before_seq - 2, before_seq, before_seq),
        )
    )
    last_uses = frozenset(row[0] for row in rows if row[1] == before_seq - 1)
    open_uses = tuple(row[0] for row in rows)
    return Tail(before_seq, cast(Role, role), last_uses, open_uses)


def _stored_rows(
    conn: apsw.Connection, session_id: str, first_seq: int, count: int
) -> list[tuple[str, bytes]]:
    return [
        (row[0], bytes(row[1]))
        for row in conn.execute(
            "SELECT role, content FROM messages WHERE session_id = ? AND seq >= ? AND seq < ? "
            "ORDER BY seq",
            (session_id, first_seq, first_seq + count),
        )
    ]


# -- writes ----------------------------------------------------------------------------


@operation(AppendMessages, tails=True)
def append_messages(
    conn: apsw.Connection, req: AppendMessages, abort: Abort, tails: TailCache | None = None
) -> AppendResult:
    op, session_id = req.op, req.session_id
    check_writer(conn, op, session_id, req.writer)
    messages = tuple(req.messages)
    if not messages:
        raise InvalidRequest(op, "no messages to append", session_id=session_id)
    check_messages(op, session_id, messages)
    check_usage(op, req.usage, session_id)
    now = time.time()
    known = tails.lookup(session_id) if tails is not None else None
    if known is not None and req.expected_seq in (None, known.next_seq):
        end = known.next_seq + len(messages)
        # Claimed only while the row still has the cached length: the entry is current.
        claimed = charge_usage(
            conn, session_id, req.usage, now, message_count=end, only_if_count=known.next_seq
        )
    else:
        claimed = False
    if claimed:
        assert known is not None
        next_seq, tail = known.next_seq, known
    else:
        info = open_session_row(conn, op, session_id)
        next_seq = info.message_count
        expected = req.expected_seq
        if expected is not None and expected != next_seq:
            return _replayed_or_conflict(conn, req, messages, next_seq)
        tail = _tail(conn, session_id, next_seq)
    encoded: list[bytes] = []
    for index, message in enumerate(messages):
        if index % _CHECK_EVERY == 0:
            abort.check(op)
        tail = validate_next(op, session_id, tail, message)
        encoded.append(encode_message(op, session_id, tail.next_seq - 1, message))
    check_new_tool_uses(op, session_id, messages, next_seq)
    for offset, (message, blob) in enumerate(zip(messages, encoded, strict=True)):
        if offset % _CHECK_EVERY == 0:
            abort.check(op)
        seq = next_seq + offset
        conn.execute(
            "INSERT INTO messages (session_id, seq, role, content, text, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, seq, message.role, blob, searchable_text(message), now),
        )
        record_tools(conn, op, session_id, seq, message)
    end = next_seq + len(messages)
    if not claimed:
        charge_usage(conn, session_id, req.usage, now, message_count=end)
    if tails is not None:
        tails.stage(session_id, tail)
    return AppendResult(session_id, next_seq, end)


def _replayed_or_conflict(
    conn: apsw.Connection, req: AppendMessages, messages: tuple[Message, ...], next_seq: int
) -> AppendResult:
    """An append at the wrong seq: acknowledged if the same messages are stored there."""
    op, session_id, expected = req.op, req.session_id, req.expected_seq
    assert expected is not None
    if 0 <= expected < next_seq:
        stored = _stored_rows(conn, session_id, expected, len(messages))
        wanted = [
            (m.role, encode_message(op, session_id, expected + i, m))
            for i, m in enumerate(messages)
        ]
        if stored == wanted:
            return AppendResult(session_id, expected, expected + len(messages), replayed=True)
    raise SeqConflict(
        op,
        f"expected to append at seq {expected} but the transcript ends at seq {next_seq} "
        f"({next_seq} messages)",
        session_id=session_id,
        expected=expected,
        actual=next_seq,
    )


@operation(ReplaceLast)
def replace_last(conn: apsw.Connection, req: ReplaceLast, abort: Abort) -> AppendResult:
    op, session_id, seq = req.op, req.session_id, req.seq
    check_writer(conn, op, session_id, req.writer)
    info = open_session_row(conn, op, session_id)
    check_messages(op, session_id, [req.message])
    check_usage(op, req.usage, session_id)
    last = info.message_count - 1
    if last < 0 or seq != last:
        raise SeqConflict(
            op,
            f"can only replace the last message (seq {last}), not seq {seq}"
            if last >= 0
            else "the session has no message to replace",
            session_id=session_id,
            expected=seq,
            actual=info.message_count,
        )
    role = conn.execute(
        "SELECT role FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
    ).get
    if role != req.message.role:
        raise InvalidTranscript(
            op,
            f"message seq {seq} is a {role} message; a replacement cannot change the role",
            session_id=session_id,
        )
    conn.execute("DELETE FROM tool_calls WHERE session_id = ? AND use_seq = ?", (session_id, seq))
    conn.execute(
        "UPDATE tool_calls SET result_seq = NULL, is_error = 0 "
        "WHERE session_id = ? AND result_seq = ?",
        (session_id, seq),
    )
    validate_next(op, session_id, _tail(conn, session_id, seq), req.message)
    blob = encode_message(op, session_id, seq, req.message)
    check_new_tool_uses(op, session_id, [req.message], seq)
    now = time.time()
    conn.execute(
        "UPDATE messages SET content = ?, text = ?, created_at = ? "
        "WHERE session_id = ? AND seq = ?",
        (blob, searchable_text(req.message), now, session_id, seq),
    )
    record_tools(conn, op, session_id, seq, req.message)
    charge_usage(conn, session_id, req.usage, now)
    return AppendResult(session_id, seq, seq + 1)


@operation(Truncate)
def truncate(conn: apsw.Connection, req: Truncate, abort: Abort) -> int:
    op, session_id, keep = req.op, req.session_id, req.keep
    check_writer(conn, op, session_id, req.writer)
    info = open_session_row(conn, op, session_id)
    if type(keep) is not int or not 0 <= keep <= info.message_count:
        raise InvalidRequest(
            op,
            f"keep must be an int from 0 to {info.message_count}, got {keep!r}",
            session_id=session_id,
        )
    conn.execute("DELETE FROM messages WHERE session_id = ? AND seq >= ?", (session_id, keep))
    conn.execute("DELETE FROM tool_calls WHERE session_id = ? AND use_seq >= ?", (session_id, keep))
    conn.execute(
        "UPDATE tool_calls SET result_seq = NULL, is_error = 0 "
        "WHERE session_id = ? AND result_seq >= ?",
        (session_id, keep),
    )
    conn.execute(
        "UPDATE sessions SET message_count = ?, updated_at = ? WHERE id = ?",
        (keep, time.time(), session_id),
    )
    return info.message_count - keep


@operation(LoadSession)
def load_session(conn: apsw.Connection, req: LoadSession, abort: Abort) -> Transcript:
    op, session_id = req.op, req.session_id
    info = session_row(conn, op, session_id)
    messages: list[Message] = []
    for seq, role, blob in conn.execute(
        "SELECT seq, role, content FROM messages WHERE session_id = ? ORDER BY seq",
        (session_id,),
    ):
        if seq % _CHECK_EVERY == 0:
            abort.check(op)
        if seq != len(messages):
            raise CorruptRecord(
                op, f"message seq {len(messages)} is missing (next is {seq})", session_id=session_id
            )
        if role not in ("user", "assistant"):
            raise CorruptRecord(op, f"message seq {seq}: bad role {role!r}", session_id=session_id)
        if not isinstance(blob, bytes):
            raise CorruptRecord(
                op,
                f"message seq {seq}: content is a {type(blob).__name__}, not a blob",
                session_id=session_id,
            )
        try:
            content = unpack_blocks(blob)
        except CodecError as exc:
            raise CorruptRecord(op, f"message seq {seq}: {exc}", session_id=session_id) from None
        messages.append(Message(role, content))
    if len(messages) != info.message_count:
        raise CorruptRecord(
            op,
            f"the session counts {info.message_count} messages but {len(messages)} are stored",
            session_id=session_id,
        )
    open_uses = tuple(
        row[0]
        for row in conn.execute(
            "SELECT tool_use_id FROM tool_calls WHERE session_id = ? AND result_seq IS NULL "
            "ORDER BY use_seq, block",
            (session_id,),
        )
    )
    return Transcript(info, tuple(messages), open_uses)


@operation(IndexPending)
def index_pending(conn: apsw.Connection, req: IndexPending, abort: Abort) -> int:
    """Index every queued message in one batch (see version 6 in ``schema.py``)."""
    last = conn.execute("SELECT max(id) FROM fts_pending").get
    if last is None:
        return 0
    count = int(conn.execute("SELECT count(*) FROM fts_pending").get)
    conn.execute(
        "INSERT INTO messages_fts (rowid, text) SELECT m.id, m.text "
        "FROM fts_pending AS p JOIN messages AS m ON m.id = p.id ORDER BY p.id"
    )
    abort.check(req.op)
    conn.execute("DELETE FROM fts_pending")
    return count


def fts_query(text: str) -> str:
    """Plain words as an FTS5 query: each word quoted, all of them required."""
    words = text.split()
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)


@operation(Search)
def search(conn: apsw.Connection, req: Search, abort: Abort) -> list[SearchHit]:
    op = req.op
    limit = check_limit(op, req.limit)
    if not isinstance(req.query, str) or not req.query.strip():
        raise InvalidRequest(op, f"the search query is empty ({req.query!r})")
    match = req.query if req.raw else fts_query(req.query)
    # Rows a compaction replaced live on in an archive session: they are reported
    # under the live session they came from, with the archive named.
    sql = (
        "SELECT coalesce(s.archive_of, m.session_id), m.seq, m.role, "
        "snippet(messages_fts, 0, ?, ?, '…', 16), bm25(messages_fts) AS rank, "
        "CASE WHEN s.archive_of IS NULL THEN NULL ELSE m.session_id END "
        "FROM messages_fts JOIN messages AS m ON m.id = messages_fts.rowid "
        "JOIN sessions AS s ON s.id = m.session_id "
        "WHERE messages_fts MATCH ?"
    )
    args: list[Any] = [req.before, req.after, match]
    if req.session_id is not None:
        sql += " AND (m.session_id = ? OR s.archive_of = ?)"
        args.extend([req.session_id, req.session_id])
    sql += " ORDER BY rank, m.session_id, m.seq LIMIT ?"
    args.append(limit)
    try:
        rows = list(conn.execute(sql, args))
    except apsw.SQLError as exc:
        if "fts5" in str(exc).lower() or "syntax" in str(exc).lower():
            raise InvalidRequest(op, f"bad full-text query {req.query!r}: {exc}") from None
        raise
    return [
        SearchHit(
            session_id=r[0], seq=r[1], role=r[2], snippet=r[3], score=-float(r[4]), archive_id=r[5]
        )
        for r in rows
    ]
