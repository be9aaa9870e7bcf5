"""Check every transcript in a daemon's database, read-only, with the store's own rules.

Each session's messages are decoded (``hermes.codec``) and fed through
``hermes.store.validate.advance``: the first message is the user's, roles
alternate, blocks fit their role, every tool_result answers a tool_use of the
message before it at most once. At rest (the daemon stopped) every tool_use
must also have its result: no open tool use at the end, and no ``tool_calls``
row without a ``result_seq``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw

from hermes.codec import unpack_blocks
from hermes.model.types import Message
from hermes.store.validate import Tail, TranscriptRuleError, advance

_MAX_PROBLEMS = 20


def check_store(db_path: Path) -> dict[str, Any]:
    """``{sessions, messages, tool_uses, invalid, problems}`` for the database at ``db_path``."""
    conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return _check(conn)
    finally:
        conn.close()


def _check(conn: apsw.Connection) -> dict[str, Any]:
    problems: list[str] = []
    invalid: set[str] = set()
    tails: dict[str, Tail] = {}
    messages = 0
    for session_id, seq, role, content in conn.execute(
        "SELECT session_id, seq, role, content FROM messages ORDER BY session_id, seq"
    ):
        messages += 1
        if session_id in invalid:
            continue
        tail = tails.get(session_id, Tail.empty())
        try:
            if seq != tail.next_seq:
                raise TranscriptRuleError(f"seq {seq} follows seq {tail.next_seq - 1}")
            tails[session_id] = advance(tail, Message(role, unpack_blocks(content)))
        except (TranscriptRuleError, ValueError) as exc:
            invalid.add(session_id)
            problems.append(f"{session_id}: {exc}")
    for session_id, tail in tails.items():
        if session_id not in invalid and tail.open_uses:
            invalid.add(session_id)
            problems.append(f"{session_id}: tool_use {list(tail.open_uses)} never got a result")
    unanswered = conn.execute(
        "SELECT session_id, tool_use_id FROM tool_calls WHERE result_seq IS NULL"
    ).fetchall()
    for session_id, tool_use_id in unanswered:
        if session_id not in invalid:
            invalid.add(str(session_id))
            problems.append(f"{session_id}: tool_calls row {tool_use_id} has no result")
    sessions = conn.execute("SELECT count(*) FROM sessions").fetchall()[0][0]
    tool_uses = conn.execute("SELECT count(*) FROM tool_calls").fetchall()[0][0]
    return {
        "sessions": sessions,
        "messages": messages,
        "tool_uses": tool_uses,
        "invalid": len(invalid),
        "problems": problems[:_MAX_PROBLEMS],
    }
