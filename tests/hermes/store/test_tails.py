"""The tail cache: appends skip reading what the store's last append left, never wrongly."""

from __future__ import annotations

import tempfile
from pathlib import Path

import apsw
import pytest
import trio

from hermes.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from hermes.store import InvalidTranscript, SessionEnded, StoreClient
from hermes.store.event_queries import AppendEvents, StoredEvent
from hermes.store.queries import _tail, run_request
from hermes.store.records import StoreConfig
from hermes.store.requests import (
    AddUsage,
    AppendMessages,
    CreateSession,
    EndSession,
    GetSession,
    ReplaceLast,
    SetTitle,
    Truncate,
)
from hermes.store.schema import configure, migrate
from hermes.store.tails import TailCache
from hermes.store.validate import Tail


def reply(*blocks: TextBlock | ToolUseBlock) -> Message:
    return Message("assistant", tuple(blocks))


def results(*ids: str) -> Message:
    return Message("user", tuple(ToolResultBlock(i, f"result of {i}") for i in ids))


def connection() -> apsw.Connection:
    conn = apsw.Connection(str(Path(tempfile.mkdtemp()) / "t.db"))
    configure(conn, StoreConfig())
    migrate(conn)
    return conn


def test_entries_change_only_when_a_transaction_commits() -> None:
    cache = TailCache(size=2)
    tail = Tail(1, "user", frozenset(), ())
    cache.stage("a", tail)
    assert cache.lookup("a") is None
    cache.commit()
    assert cache.lookup("a") == tail
    cache.stage("b", tail)
    cache.clear()  # a failure: the staged one is dropped with the rest
    cache.commit()
    assert cache.lookup("a") is None and cache.lookup("b") is None
    for name in "abc":
        cache.stage(name, tail)
        cache.commit()
    assert len(cache) == 2 and cache.lookup("a") is None  # the oldest went first
    cache.forget("b")
    assert cache.lookup("b") is None and cache.lookup("c") == tail
    cache.forget(None)
    assert len(cache) == 0


def test_the_cached_tail_is_the_one_the_database_gives() -> None:
    conn, cache = connection(), TailCache()
    sid = run_request(conn, CreateSession("m")).id
    script = [
        Message.user("go"),
        reply(TextBlock("two tools"), ToolUseBlock("t1", "x", {}), ToolUseBlock("t2", "y", {})),
        results("t1"),  # one result so far: t2 still open
    ]
    for seq, message in enumerate(script):
        run_request(conn, AppendMessages(sid, (message,), seq), tails=cache)
        assert cache.lookup(sid) == _tail(conn, sid, seq + 1), seq
    # The next assistant message is refused on the cached path too: t2 has no result.
    with pytest.raises(InvalidTranscript, match="t2"):
        run_request(conn, AppendMessages(sid, (reply(TextBlock("too soon")),), 3), tails=cache)
    assert len(cache) == 0  # a failure drops every entry
    run_request(conn, ReplaceLast(sid, 2, results("t1", "t2")), tails=cache)
    run_request(conn, AppendMessages(sid, (reply(TextBlock("done")),), 3), tails=cache)
    assert cache.lookup(sid) == _tail(conn, sid, 4)


def test_other_writes_to_the_session_are_not_trusted_to_the_cache() -> None:
    conn, cache = connection(), TailCache()
    sid = run_request(conn, CreateSession("m")).id
    run_request(
        conn, AppendMessages(sid, (Message.user("a"), reply(TextBlock("b"))), 0), tails=cache
    )
    run_request(conn, Truncate(sid, 1), tails=cache)
    assert cache.lookup(sid) is None
    # After the truncation the transcript ends with the user's message again.
    with pytest.raises(InvalidTranscript):
        run_request(conn, AppendMessages(sid, (Message.user("again"),), 1), tails=cache)
    run_request(conn, AppendMessages(sid, (reply(TextBlock("c")),), 1), tails=cache)
    assert cache.lookup(sid) == _tail(conn, sid, 2)


def test_writes_that_leave_the_transcript_alone_keep_the_entries() -> None:
    conn, cache = connection(), TailCache()
    sid = run_request(conn, CreateSession("m")).id
    other = run_request(conn, CreateSession("m")).id
    run_request(conn, AppendMessages(sid, (Message.user("a"),), 0), tails=cache)
    run_request(conn, AppendMessages(other, (Message.user("x"),), 0), tails=cache)
    kept = {sid: cache.lookup(sid), other: cache.lookup(other)}
    # The daemon's event log (no session field) used to make the cache forget everything.
    event = StoredEvent(sid, 1, "TextDelta", 1.0, b"\x80")
    run_request(conn, AppendEvents((event,)), tails=cache)
    run_request(conn, SetTitle(sid, "a title"), tails=cache)
    run_request(conn, AddUsage(sid, Usage(1, 2)), tails=cache)
    assert {sid: cache.lookup(sid), other: cache.lookup(other)} == kept
    run_request(conn, EndSession(other, "done"), tails=cache)  # this one does move it
    assert cache.lookup(other) is None and cache.lookup(sid) == kept[sid]
    run_request(conn, AppendMessages(sid, (reply(TextBlock("b")),), 1), tails=cache)
    assert cache.lookup(sid) == _tail(conn, sid, 2)
    assert run_request(conn, GetSession(sid)).title == "a title"


def test_a_stale_entry_fails_its_claim_and_the_append_reads_the_database() -> None:
    conn, cache = connection(), TailCache()
    sid = run_request(conn, CreateSession("m")).id
    run_request(conn, AppendMessages(sid, (Message.user("a"),), 0), tails=cache)
    # A write the cache never saw (as another connection's would be).
    run_request(conn, AppendMessages(sid, (reply(TextBlock("b")),), 1))
    assert cache.lookup(sid) == Tail(1, "user", frozenset(), ())
    result = run_request(conn, AppendMessages(sid, (Message.user("c"),)), tails=cache)
    assert (result.first_seq, result.next_seq) == (2, 3)
    assert cache.lookup(sid) == _tail(conn, sid, 3)


async def test_an_ended_session_refuses_appends_on_the_cached_path(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, Message.user("hello"), expected_seq=0)
        await store.end_session(info.id, "done")
        with pytest.raises(SessionEnded):
            await store.append(info.id, reply(TextBlock("late")), expected_seq=1)
        await store.reopen_session(info.id)
        await store.append(info.id, reply(TextBlock("back")), expected_seq=1)
        transcript = await store.load(info.id)
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
