"""The full-text index in batches (schema version 6): queued rows, indexed rows, upgrades."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw
import trio

from actors import ActorSystem
from hermes.model.types import Message, ToolResultBlock, ToolUseBlock
from hermes.store import MIGRATIONS, StoreClient, migrate, spawn_store
from hermes.store.actor import INDEX_BATCH

from .helpers import reply

Peek = Callable[[], apsw.Connection]


def queued(peek: Peek) -> int:
    return int(peek().execute("SELECT count(*) FROM fts_pending").get)


def indexed(peek: Peek, word: str) -> int:
    """Rows of the index itself matching ``word`` (not through the store, so no catch-up)."""
    query = "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?"
    return int(peek().execute(query, (word,)).get)


async def test_a_write_queues_its_row_and_a_search_indexes_it_first(
    store: StoreClient, peek: Peek
) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, Message.user("quokka sighting"))
        assert queued(peek) == 1
        assert indexed(peek, "quokka") == 0
        hits = await store.search("quokka")
    assert [(h.session_id, h.seq) for h in hits] == [(info.id, 0)]
    assert queued(peek) == 0
    assert indexed(peek, "quokka") == 1


async def test_deleting_queued_and_indexed_rows_leaves_no_ghosts(
    store: StoreClient, peek: Peek
) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, [Message.user("ibis one"), reply("ibis two")])
        assert sorted(h.seq for h in await store.search("ibis")) == [0, 1]
        await store.append(info.id, [Message.user("ibis three"), reply("ibis four")])
        assert queued(peek) == 2
        # Two indexed rows and two queued ones go: the index and the queue both shrink.
        await store.truncate(info.id, 2)
        assert queued(peek) == 0
        # The freed row ids are given out again: the new rows must be indexed, not skipped.
        await store.append(info.id, [Message.user("heron five"), reply("heron six")])
        hits = await store.search("heron")
        assert sorted(h.seq for h in hits) == [2, 3]
        assert await store.search("three") == [] and await store.search("four") == []
        await store.truncate(info.id, 0)
        assert await store.search("ibis") == [] and await store.search("heron") == []
    assert indexed(peek, "ibis") == 0 and indexed(peek, "heron") == 0


async def test_rewriting_an_indexed_row_reindexes_it(store: StoreClient, peek: Peek) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        use = Message("assistant", (ToolUseBlock("t1", "x", {}),))
        await store.append(info.id, [Message.user("go"), use])
        await store.append(info.id, Message("user", (ToolResultBlock("t1", "partial alpha"),)))
        assert len(await store.search("alpha")) == 1  # now indexed
        await store.replace_last(
            info.id, 2, Message("user", (ToolResultBlock("t1", "final beta"),))
        )
        assert queued(peek) == 1
        assert indexed(peek, "alpha") == 0  # out of the index at once, not at the next batch
        assert await store.search("alpha") == []
        assert [h.seq for h in await store.search("beta")] == [2]


async def test_the_queue_is_indexed_in_the_background(store: StoreClient, peek: Peek) -> None:
    with trio.fail_after(20):
        info = await store.create_session(model="m")
        for i in range(INDEX_BATCH // 2):
            await store.append(info.id, [Message.user(f"question {i}"), reply(f"answer kiwi {i}")])
        # The batch ran when the INDEX_BATCH-th message was written, without a search.
        await store.get_session(info.id)  # a request behind the batch: it has run by now
        assert queued(peek) == 0
        assert indexed(peek, "kiwi") == INDEX_BATCH // 2


def version_5_database(store_dir: Path) -> None:
    """A store file as version 5 left it: one message, indexed by its insert trigger."""
    store_dir.mkdir(parents=True)
    conn = apsw.Connection(str(store_dir / "hermes.db"))
    conn.pragma("journal_mode", "wal")
    assert migrate(conn, MIGRATIONS[:5]) == 5
    conn.execute(
        "INSERT INTO sessions (id, model, created_at, updated_at, message_count) "
        "VALUES ('old', 'm', 1, 1, 1)"
    )
    conn.execute(
        "INSERT INTO messages (session_id, seq, role, content, text, created_at) "
        "VALUES ('old', 0, 'user', x'90', 'walrus from before', 1)"
    )
    conn.close()


async def test_a_version_5_database_keeps_its_index(system: ActorSystem, store_dir: Path) -> None:
    version_5_database(store_dir)
    store = await spawn_store(system, store_dir, register=None)
    with trio.fail_after(10):
        # Indexed by version 1's trigger: found, and its deletion reaches the index.
        assert [h.session_id for h in await store.search("walrus")] == ["old"]
        await store.truncate("old", 0)
        assert await store.search("walrus") == []
