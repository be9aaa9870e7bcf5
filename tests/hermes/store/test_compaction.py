"""Compaction in the store: one transaction, old rows archived (never lost), search finds both."""

from __future__ import annotations

from collections.abc import Callable

import apsw
import pytest
import trio

from hermes.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock
from hermes.store import InvalidRequest, InvalidTranscript, SeqConflict, StoreClient

Peek = Callable[[], apsw.Connection]


def history() -> list[Message]:
    return [
        Message.user("Find the flamingo config"),
        Message("assistant", (ToolUseBlock("toolu_1", "search_files", {"pattern": "flamingo"}),)),
        Message("user", (ToolResultBlock("toolu_1", "conf/flamingo.toml"),)),
        Message("assistant", (TextBlock("It is conf/flamingo.toml."),)),
        Message.user("Now read it"),
        Message("assistant", (ToolUseBlock("toolu_2", "read_file", {"path": "conf/x"}),)),
        Message("user", (ToolResultBlock("toolu_2", "port = 8080"),)),
        Message("assistant", (TextBlock("The port is 8080."),)),
    ]


def compacted() -> list[Message]:
    return [
        Message.user("Find the flamingo config"),
        Message("assistant", (TextBlock("[Context summary] found conf/flamingo.toml"),)),
        Message("user", (TextBlock("Now read it"),)),
        Message("assistant", (ToolUseBlock("toolu_2", "read_file", {"path": "conf/x"}),)),
        Message("user", (ToolResultBlock("toolu_2", "port = 8080"),)),
        Message("assistant", (TextBlock("The port is 8080."),)),
    ]


async def test_compaction_replaces_the_transcript_and_archives_the_old_rows(
    store: StoreClient, peek: Peek
) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m", title="flamingo")
        await store.append(info.id, history())
        record = await store.compact(
            info.id, 8, compacted(), method="model", tokens_before=900, tokens_after=300
        )
        live = await store.load(info.id)
        archive = await store.load(record.archive_id)
        listed = await store.list_sessions()
        records = await store.list_compactions(info.id)
    assert list(live.messages) == compacted()
    assert live.session.message_count == 6 and live.open_tool_uses == ()
    # Nothing is lost: the old rows, unchanged, in an ended archive linked to the session.
    assert list(archive.messages) == history()
    assert archive.session.archive_of == info.id and archive.session.ended
    assert archive.session.end_reason == "compacted" and archive.session.title == "flamingo"
    assert record.archive_id == f"{info.id}~c1" and record.method == "model"
    assert (record.messages_before, record.messages_after) == (8, 6)
    assert (record.tokens_before, record.tokens_after) == (900, 300)
    assert records == [record]
    # Archives are not sessions a user lists.
    assert [s.id for s in listed] == [info.id]
    conn = peek()
    assert conn.execute("SELECT count(*) FROM messages").get == 14
    assert conn.execute("SELECT count(*) FROM tool_calls WHERE session_id = ?", (info.id,)).get == 1


async def test_search_finds_compacted_rows_under_their_live_session(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, history())
        record = await store.compact(info.id, 8, compacted(), method="static")
        # "conf/flamingo.toml" as a tool result exists only in the archived rows now.
        hits = await store.search("flamingo", session_id=info.id)
        everywhere = await store.search("8080")
    archived = [h for h in hits if h.archive_id is not None]
    live = [h for h in hits if h.archive_id is None]
    assert archived and live
    assert all(h.session_id == info.id for h in hits)
    assert {h.archive_id for h in archived} == {record.archive_id}
    assert {(h.archive_id, h.seq) for h in everywhere} >= {(None, 4), (record.archive_id, 6)}


async def test_second_compaction_gets_its_own_archive(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, history())
        first = await store.compact(info.id, 8, compacted(), method="model")
        await store.append(info.id, [Message.user("and the host?")])
        again = [*compacted()[:1], Message("assistant", (TextBlock("[summary 2]"),))]
        again.append(Message.user("and the host?"))
        second = await store.compact(info.id, 7, again, method="model", focus="host")
        previous = await store.load(second.archive_id)
    assert second.archive_id == f"{info.id}~c2" and second.focus == "host"
    assert first.archive_id != second.archive_id
    assert len(previous.messages) == 7 and previous.messages[-1] == Message.user("and the host?")


async def test_a_stale_or_invalid_compaction_changes_nothing(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, history())
        with pytest.raises(SeqConflict, match="planned on 7 messages but the transcript now has 8"):
            await store.compact(info.id, 7, compacted(), method="model")
        bad = [Message.user("a"), Message.user("b")]
        with pytest.raises(InvalidTranscript):
            await store.compact(info.id, 8, bad, method="model")
        with pytest.raises(InvalidRequest, match="cannot be empty"):
            await store.compact(info.id, 8, [], method="model")
        orphan = [Message("user", (ToolResultBlock("toolu_9", "x"),))]
        with pytest.raises(InvalidTranscript):
            await store.compact(info.id, 8, orphan, method="model")
        after = await store.load(info.id)
        records = await store.list_compactions(info.id)
    assert list(after.messages) == history() and records == []


async def test_an_archive_cannot_be_reopened_or_written(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, history())
        record = await store.compact(info.id, 8, compacted(), method="model")
        with pytest.raises(InvalidRequest, match="is an archive of rows compacted out of"):
            await store.reopen_session(record.archive_id)
        with pytest.raises(Exception, match="ended"):
            await store.append(record.archive_id, [Message.user("x")])
