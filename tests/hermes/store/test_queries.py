"""The transaction wrapper, on an ordinary connection (no actor, no worker thread)."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from hermes.model.types import Message, TextBlock
from hermes.store import (
    AppendMessages,
    CreateSession,
    InvalidTranscript,
    LoadSession,
    RequestAborted,
    migrate,
)
from hermes.store.operations import Abort
from hermes.store.queries import fts_query, run_request


@pytest.fixture
def conn(tmp_path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(tmp_path / "q.db"))
    conn.pragma("journal_mode", "wal")
    migrate(conn)
    run_request(conn, CreateSession("m", session_id="s"))
    return conn


def count(conn: apsw.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM messages").get)


def test_an_aborted_request_is_rolled_back(conn: apsw.Connection) -> None:
    batch = tuple(
        Message("user" if i % 2 == 0 else "assistant", (TextBlock(f"m{i}"),)) for i in range(300)
    )
    abort = Abort()
    abort.set()
    with pytest.raises(RequestAborted, match=r"store append .* stopped waiting"):
        run_request(conn, AppendMessages("s", batch), abort)
    assert count(conn) == 0
    assert conn.get_autocommit()
    run_request(conn, AppendMessages("s", batch))
    assert count(conn) == 300


def test_a_transaction_left_open_is_dropped_first(conn: apsw.Connection) -> None:
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO sessions (id, model, created_at, updated_at) VALUES ('ghost', 'm', 0, 0)"
    )
    # As if an interrupted request had left its transaction open: it never committed.
    run_request(conn, AppendMessages("s", (Message.user("hi"),)))
    assert conn.execute("SELECT count(*) FROM sessions WHERE id = 'ghost'").get == 0
    assert run_request(conn, LoadSession("s")).messages == (Message.user("hi"),)


def test_failed_request_leaves_no_transaction_open(conn: apsw.Connection) -> None:
    with pytest.raises(InvalidTranscript, match="roles must alternate"):
        run_request(conn, AppendMessages("s", (Message.user("a"), Message.user("b"))))
    assert conn.get_autocommit()
    assert count(conn) == 0


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("deploy now", '"deploy" "now"'),
        ('say "hi"', '"say" """hi"""'),
        ("  a   b ", '"a" "b"'),
        ("x OR y*", '"x" "OR" "y*"'),
    ],
)
def test_plain_words_become_quoted_terms(text: str, query: str) -> None:
    assert fts_query(text) == query
