"""Small writes run inline on the loop; large ones and reads in the worker thread."""

from __future__ import annotations

from pathlib import Path

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
