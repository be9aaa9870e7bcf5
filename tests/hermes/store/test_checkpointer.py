"""WAL checkpoints run in the store's ``checkpointer`` child, beside the writes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal, cast

import apsw
import pytest
import trio

from actors import ActorSystem
from hermes.model.types import Message, TextBlock
from hermes.store import StoreActor, StoreClient
from hermes.store import checkpointer as checkpointer_module
from hermes.store import database as database_module
from hermes.store.database import (
    CHECKPOINT_PAGES,
    WAL_LIMIT_PAGES,
    WalWatch,
    checkpoint_passive,
    checkpoint_restart,
)

CHUNK = "z" * 40_000
"""About ten WAL pages per message."""


class Gate:
    """Stands in for ``checkpoint_passive`` in the checkpointer's worker thread: counts
    the calls, can hold them until released, can fail the next one."""

    def __init__(self, hold: bool = False) -> None:
        self.entered = threading.Event()
        self.released = threading.Event()
        self.fail_next = False
        self.completed = 0
        self.results: list[tuple[int, int]] = []
        if not hold:
            self.released.set()

    def __call__(self, conn: apsw.Connection) -> tuple[int, int]:
        self.entered.set()
        if not self.released.wait(10):
            raise RuntimeError("the test never released the checkpoint")
        if self.fail_next:
            self.fail_next = False
            raise apsw.IOError("disk I/O error (injected)")
        result = checkpoint_passive(conn)
        self.results.append(result)
        self.completed += 1
        return result


async def spawn(system: ActorSystem, store_dir: Path) -> StoreClient:
    return StoreClient(await system.spawn(StoreActor(store_dir), name="store"))


async def fill_wal(store: StoreClient, session: str, start: int, pages: int) -> int:
    """Append messages until about ``pages`` WAL pages were written; the next seq."""
    seq = start
    for _ in range(pages // 10 + 1):
        role: Literal["user", "assistant"] = "user" if seq % 2 == 0 else "assistant"
        await store.append(session, Message(role, (TextBlock(CHUNK),)), expected_seq=seq)
        seq += 1
    return seq


async def until(condition: Callable[[], bool]) -> None:
    """Poll: the checkpointer's thread makes the progress, there is no event to wait on."""
    with trio.fail_after(10):
        while not condition():  # noqa: ASYNC110
            await trio.sleep(0.005)


async def test_the_store_writes_while_a_checkpoint_runs(
    system: ActorSystem, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(hold=True)
    monkeypatch.setattr(checkpointer_module, "checkpoint_passive", gate)
    store = await spawn(system, store_dir)
    assert system.lookup("/store/checkpointer") is not None
    with trio.fail_after(20):
        info = await store.create_session(model="m")
        seq = await fill_wal(store, info.id, 0, CHECKPOINT_PAGES)
        assert await trio.to_thread.run_sync(gate.entered.wait, 10)
        # The checkpoint is held in the checkpointer's thread: the store serves on.
        for _ in range(5):
            role: Literal["user", "assistant"] = "user" if seq % 2 == 0 else "assistant"
            await store.append(info.id, Message(role, (TextBlock("still here"),)), expected_seq=seq)
            seq += 1
        assert (await store.get_session(info.id)).message_count == seq
        assert gate.completed == 0
        gate.released.set()
        await until(lambda: gate.completed >= 1)


def test_a_fresh_connection_checkpoints_every_frame(tmp_path: Path) -> None:
    # A connection that never read the database has not opened its WAL: SQLite's
    # checkpoint through it copied nothing and returned (-1, -1) (the checkpointer's
    # own connection is such a one).
    writer = apsw.Connection(str(tmp_path / "w.db"))
    writer.pragma("journal_mode", "wal")
    writer.execute("CREATE TABLE t (x)")
    for _ in range(20):
        writer.execute("INSERT INTO t VALUES (randomblob(3000))")
    fresh = apsw.Connection(str(tmp_path / "w.db"))
    frames, copied = checkpoint_passive(fresh)
    assert frames > 20 and copied == frames


def test_a_checkpoint_that_cannot_run_now_is_not_a_failure(tmp_path: Path) -> None:
    # SQLite runs one checkpoint at a time and refuses others with BusyError (the
    # checkpointer's and the store's paused one meet): here the lock is held by a
    # connection in exclusive locking mode instead.
    holder = apsw.Connection(str(tmp_path / "w.db"))
    holder.pragma("journal_mode", "wal")
    holder.execute("CREATE TABLE t (x)")
    holder.pragma("locking_mode", "exclusive")
    holder.execute("INSERT INTO t VALUES (1)")
    other = apsw.Connection(str(tmp_path / "w.db"))
    other.set_busy_timeout(0)
    assert checkpoint_passive(other) == (-1, -1)
    holder.close()
    assert checkpoint_passive(other)[0] >= 0  # free again: it checkpoints


async def test_the_checkpointer_copies_the_wal_back(
    system: ActorSystem, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate()
    monkeypatch.setattr(checkpointer_module, "checkpoint_passive", gate)
    store = await spawn(system, store_dir)
    with trio.fail_after(20):
        info = await store.create_session(model="m")
        await fill_wal(store, info.id, 0, CHECKPOINT_PAGES)
        await until(lambda: gate.completed >= 1)
    frames, copied = gate.results[0]
    assert frames >= CHECKPOINT_PAGES and copied > 0


async def test_a_failed_checkpoint_is_logged_and_the_next_one_runs(
    system: ActorSystem,
    store_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = Gate()
    gate.fail_next = True
    monkeypatch.setattr(checkpointer_module, "checkpoint_passive", gate)
    store = await spawn(system, store_dir)
    with caplog.at_level(logging.WARNING, logger="hermes.store.checkpointer"):
        info = await store.create_session(model="m")
        seq = await fill_wal(store, info.id, 0, CHECKPOINT_PAGES)
        await until(lambda: "injected" in caplog.text)
        assert f"checkpoint of {store_dir / 'hermes.db'} failed" in caplog.text
        await fill_wal(store, info.id, seq, CHECKPOINT_PAGES)
        await until(lambda: gate.completed >= 1)
    assert system.lookup("/store/checkpointer") is not None  # it did not crash
    assert (await store.get_session(info.id)).message_count > seq


def test_a_checkpoint_is_asked_for_once_per_checkpoint_pages_grown() -> None:
    watch = WalWatch()
    conn = cast(apsw.Connection, None)
    asked = []
    for pages in (10, CHECKPOINT_PAGES - 1, CHECKPOINT_PAGES, CHECKPOINT_PAGES + 5):
        watch.hook(conn, "main", pages)
        asked.append(watch.due)
        watch.due = False
    # Past the mark, a commit beside a running checkpoint does not ask again...
    assert asked == [False, False, True, False]
    watch.hook(conn, "main", 2 * CHECKPOINT_PAGES)
    assert watch.due and watch.pages == 2 * CHECKPOINT_PAGES  # ...until it grew as much again
    watch.due = False
    watch.hook(conn, "main", 3)  # the WAL was restarted: counting starts over
    watch.hook(conn, "main", CHECKPOINT_PAGES)
    assert watch.due


async def test_past_the_wal_limit_the_store_checkpoints_itself_and_survives_a_failure(
    system: ActorSystem,
    store_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    held = Gate(hold=True)  # the checkpointer never catches up...
    monkeypatch.setattr(checkpointer_module, "checkpoint_passive", held)
    paused = Gate()
    paused.fail_next = True  # ...and the store's own first checkpoint fails
    monkeypatch.setattr(database_module, "checkpoint_restart", paused)
    store = await spawn(system, store_dir)
    try:
        with caplog.at_level(logging.WARNING, logger="hermes.store.database"):
            info = await store.create_session(model="m")
            seq = await fill_wal(store, info.id, 0, WAL_LIMIT_PAGES)
            await until(lambda: "injected" in caplog.text)
            seq = await fill_wal(store, info.id, seq, CHECKPOINT_PAGES)
            await until(lambda: paused.completed >= 1)  # the next one ran, writes paused
        assert (await store.get_session(info.id)).message_count == seq  # still serving
    finally:
        held.released.set()


class _SyncGate(apsw.VFS):
    """A VFS whose files hold their first ``xSync`` until released: a checkpoint run
    through it stops mid-way holding SQLite's checkpoint lock."""

    name = "hermes-test-sync-gate"

    def __init__(self) -> None:
        super().__init__(self.name, "")
        self.entered = threading.Event()
        self.released = threading.Event()

    def xOpen(self, name: str | apsw.URIFilename | None, flags: list[int]) -> apsw.VFSFile:
        return _GatedFile(self, name, flags)


class _GatedFile(apsw.VFSFile):
    def __init__(
        self, gate: _SyncGate, name: str | apsw.URIFilename | None, flags: list[int]
    ) -> None:
        super().__init__("", name, flags)  # type: ignore[arg-type]
        self.gate = gate

    def xSync(self, flags: int) -> None:
        self.gate.entered.set()
        if not self.gate.released.wait(30):
            raise RuntimeError("the test never released the sync")
        super().xSync(flags)


def test_a_restart_checkpoint_waits_out_one_already_running(tmp_path: Path) -> None:
    # SQLite refuses a second checkpoint at once, without the busy handler: the
    # store's paused checkpoint gave up whenever it met the checkpointer's.
    path = str(tmp_path / "x.db")
    writer = apsw.Connection(path)
    for statement in (
        "PRAGMA journal_mode=WAL",
        "PRAGMA wal_autocheckpoint=0",
        "CREATE TABLE t(x)",
    ):
        writer.execute(statement).fetchall()
    for _ in range(100):
        writer.execute("INSERT INTO t VALUES (randomblob(4000))")
    gate = _SyncGate()
    other = apsw.Connection(path, vfs=gate.name)
    running = threading.Thread(target=checkpoint_passive, args=(other,))
    running.start()
    try:
        assert gate.entered.wait(30)  # the other checkpoint holds the lock
        result: list[tuple[int, int]] = []
        restart = threading.Thread(target=lambda: result.append(checkpoint_restart(writer, 30)))
        restart.start()
        restart.join(0.2)  # (it is still waiting; on the old code it had given up)
        gate.released.set()
        restart.join(30)
        assert not restart.is_alive()
        ((frames, copied),) = result
        assert frames == copied > 0
    finally:
        gate.released.set()
        running.join(30)
        other.close()
        writer.close()
        gate.unregister()
