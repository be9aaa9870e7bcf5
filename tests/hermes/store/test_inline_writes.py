"""Small writes run inline on the loop; large ones and reads in the worker thread."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
import trio

from actors import ActorSystem
from hermes.model.types import ImageBlock, Message, TextBlock
from hermes.store import AppendMessages, GetSession, ReplaceLast, StoreActor, StoreClient
from hermes.store import actor as store_actor
from hermes.store.database import CHECKPOINT_PAGES, INLINE_MAX_CHARS, runs_inline


def test_which_requests_run_inline() -> None:
    small = Message.user("hi")
    assert runs_inline(AppendMessages("s", (small,)))
    assert runs_inline(ReplaceLast("s", 3, small))
    assert not runs_inline(AppendMessages("s", (small,) * 9))  # many messages: worker
    big = Message.user("x" * (INLINE_MAX_CHARS + 1))
    assert not runs_inline(AppendMessages("s", (big,)))
    image = Message("user", (ImageBlock("image/png", "A" * (INLINE_MAX_CHARS + 1)),))
    assert not runs_inline(ReplaceLast("s", 0, image))
    assert not runs_inline(GetSession("s"))  # reads always go to the worker


async def test_inline_writes_checkpoint_the_wal(
    system: ActorSystem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Back-to-back writes leave a passive checkpoint no gap in which the WAL could be
    # reused: the bound is the paused checkpoint's, lowered here from its 32 MB.
    monkeypatch.setattr(store_actor, "WAL_LIMIT_PAGES", 2 * CHECKPOINT_PAGES)
    actor = StoreActor(tmp_path / "data")
    store = StoreClient(await system.spawn(actor, name="store"))
    chunk = "y" * 40_000  # ~10 pages per message
    with trio.fail_after(30):
        info = await store.create_session(model="m")
        for seq in range(600):  # ~24 MB through the inline connection
            role = "user" if seq % 2 == 0 else "assistant"
            await store.append(info.id, Message(role, (TextBlock(chunk),)), expected_seq=seq)
        assert (await store.get_session(info.id)).message_count == 600
    wal = (tmp_path / "data" / "hermes.db-wal").stat().st_size
    page = 4096
    # Without checkpoints the WAL would hold all ~24 MB. Past the limit a paused
    # checkpoint can still meet one of the checkpointer's and copy only part: the next
    # one is asked for CHECKPOINT_PAGES later, so allow several of those (8 MB).
    assert wal < 8 * CHECKPOINT_PAGES * page, wal


async def test_a_paused_checkpoint_that_could_not_finish_is_retried_at_the_next_write(
    system: ActorSystem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reader in another connection holds its snapshot while the WAL crosses the
    # limit: the paused checkpoint waits out its busy timeout and gives up. Once the
    # reader is done, the very next writes checkpoint and restart the WAL, instead of
    # the WAL growing another CHECKPOINT_PAGES before anything asks again.
    monkeypatch.setattr(store_actor, "WAL_LIMIT_PAGES", 2 * CHECKPOINT_PAGES)
    actor = StoreActor(tmp_path / "data")
    store = StoreClient(await system.spawn(actor, name="store"))
    chunk = "y" * 40_000  # ~10 pages per message
    info = await store.create_session(model="m")
    reader = apsw.Connection(str(tmp_path / "data" / "hermes.db"))
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM sqlite_schema").fetchall()
    seq = 0

    async def append() -> None:
        nonlocal seq
        role = "user" if seq % 2 == 0 else "assistant"
        await store.append(info.id, Message(role, (TextBlock(chunk),)), expected_seq=seq)
        seq += 1

    with trio.fail_after(60):
        while actor._db is not None and actor._db.wal_pages < 2 * CHECKPOINT_PAGES:
            await append()
        await append()  # served after the paused checkpoint the limit asked for
        await append()
        reader.execute("COMMIT")
        reader.close()
        for _ in range(5):  # ~130 pages (a message and its index rows: ~26)
            await append()
    assert actor._db is not None
    assert actor._db.wal_pages < CHECKPOINT_PAGES, actor._db.wal_pages
