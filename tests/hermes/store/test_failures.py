"""Failures are answered with a StoreError naming the operation; the store keeps serving."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import msgpack
import pytest
import trio

from actors import ActorExited, ActorSystem, CallTimeout, ExitReason, open_system
from hermes.model.types import Message, TextBlock, ToolUseBlock, Usage
from hermes.store import (
    AppendMessages,
    CorruptRecord,
    CreateSession,
    GetSession,
    InvalidRequest,
    LoadSession,
    SessionNotFound,
    SetTitle,
    StoreActor,
    StoreClient,
    StoreConfig,
    StoreError,
    StoreTimeout,
    StoreUnavailable,
    spawn_store,
)

Peek = Callable[[], apsw.Connection]


def db_files(directory: Path) -> list[Path]:
    return [directory / f"hermes.db{suffix}" for suffix in ("", "-wal", "-shm")]


async def start(
    system: ActorSystem, directory: Path, config: StoreConfig | None = None
) -> tuple[StoreActor, StoreClient]:
    actor = StoreActor(directory, config)
    ref = await system.spawn(actor, name="store")
    return actor, StoreClient(ref)


@pytest.mark.parametrize(
    ("call", "op"),
    [
        (lambda s: s.load("ghost"), "load"),
        (lambda s: s.get_session("ghost"), "get_session"),
        (lambda s: s.append("ghost", Message.user("hi")), "append"),
        (lambda s: s.replace_last("ghost", 0, Message.user("hi")), "replace_last"),
        (lambda s: s.truncate("ghost", 0), "truncate"),
        (lambda s: s.add_usage("ghost", Usage(1)), "add_usage"),
        (lambda s: s.request(SetTitle("ghost", "t")), "set_title"),
        (lambda s: s.end_session("ghost", "done"), "end_session"),
        (lambda s: s.reopen_session("ghost"), "reopen_session"),
    ],
)
async def test_unknown_session_is_named(
    store: StoreClient, call: Callable[[StoreClient], Any], op: str
) -> None:
    with trio.fail_after(10):
        with pytest.raises(SessionNotFound) as error:
            await call(store)
        assert (
            str(error.value) == f"store {op} (session 'ghost') failed: no session with id 'ghost'"
        )
        assert error.value.operation == op
        assert (await store.create_session(model="m")).id


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda s: s.list_sessions(limit=0), "limit must be an int from 1 to 1000, got 0"),
        (lambda s: s.search("x", limit=5000), "limit must be an int from 1 to 1000, got 5000"),
        (lambda s: s.create_session(model=""), "model must be a non-empty str"),
        (
            lambda s: s.create_session(model="m", session_id=""),
            "session_id must be a non-empty str",
        ),
        (lambda s: s.append("s", []), "no messages to append"),
        (lambda s: s.append("s", ["hello"]), "messages[0] is a str, not a Message"),
        (lambda s: s.add_usage("s", Usage(-1)), "usage.input_tokens must be an int >= 0, got -1"),
        (lambda s: s.truncate("s", 5), "keep must be an int from 0 to 0, got 5"),
        (lambda s: s.end_session("s", ""), "reason must be a non-empty str"),
    ],
)
async def test_bad_arguments_are_named(
    store: StoreClient, call: Callable[[StoreClient], Any], fragment: str
) -> None:
    with trio.fail_after(10):
        await store.create_session(model="m", session_id="s")
        with pytest.raises(InvalidRequest) as error:
            await call(store)
        assert fragment in str(error.value)


async def test_content_that_cannot_be_stored_is_refused_whole(
    store: StoreClient, peek: Peek
) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        batch = [
            Message.user("fine"),
            Message("assistant", (ToolUseBlock("t", "n", {"args": ("a", "tuple")}),)),
        ]
        with pytest.raises(InvalidRequest) as error:
            await store.append(info.id, batch)
        assert "message seq 1 cannot be stored" in str(error.value)
        assert "tuple is not JSON data (use a list) at input['args']" in str(error.value)
        assert (await store.load(info.id)).messages == ()
    assert peek().execute("SELECT count(*) FROM messages").get == 0


def write_text_file_as_db(store_dir: Path) -> None:
    store_dir.mkdir()
    (store_dir / "hermes.db").write_bytes(b"this is a text file, not SQLite\n" * 200)


def set_modes(store_dir: Path, db_mode: int, dir_mode: int) -> None:
    (store_dir / "hermes.db").chmod(db_mode)
    store_dir.chmod(dir_mode)


async def test_file_that_is_not_a_database(system: ActorSystem, store_dir: Path) -> None:
    write_text_file_as_db(store_dir)
    with trio.fail_after(10):
        with pytest.raises(StoreUnavailable) as error:
            await spawn_store(system, store_dir, register=None)
    message = str(error.value)
    assert message.startswith("store open failed: cannot use ")
    assert str(store_dir / "hermes.db") in message
    assert "file is not a database" in message and "[NotADBError]" in message


async def test_directory_that_cannot_be_created(system: ActorSystem, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with trio.fail_after(10):
        with pytest.raises(StoreUnavailable, match=r"store open failed: cannot create .*file/data"):
            await spawn_store(system, blocker / "data", register=None)


async def test_deleted_database_file(system: ActorSystem, store_dir: Path) -> None:
    with trio.fail_after(10):
        actor, store = await start(system, store_dir)
        info = await store.create_session(model="m")
        for path in db_files(store_dir):
            path.unlink(missing_ok=True)

        # SQLite would happily go on writing into the unlinked file; the store refuses.
        with pytest.raises(StoreUnavailable) as error:
            await store.append(info.id, Message.user("into the void?"))
        assert error.value.operation == "append"
        assert "was deleted after it was opened" in str(error.value)

        # The next request opens the path afresh: a new, empty store.
        fresh = await store.create_session(model="m")
        assert actor.reopened == 1
        assert (store_dir / "hermes.db").exists()
        with pytest.raises(SessionNotFound):
            await store.load(info.id)
        assert (await store.load(fresh.id)).messages == ()


async def test_restored_backup_is_not_mixed_with_the_old_wal(
    system: ActorSystem, store_dir: Path, peek: Peek
) -> None:
    """Put a backup in place of the live file: the -wal left at the path is the old file's,
    and SQLite would replay it over the backup; the store removes it first."""
    with trio.fail_after(10):
        _, store = await start(system, store_dir)
        kept = await store.create_session(model="m", session_id="kept")
        await store.append(kept.id, Message.user("in the backup"))
        backup = store_dir.parent / "backup.db"
        peek().execute("VACUUM INTO ?", (str(backup),))
        later = await store.create_session(model="m", session_id="later")
        await store.append(later.id, Message.user("after the backup"))
        os.replace(backup, store_dir / "hermes.db")

        with pytest.raises(StoreUnavailable, match="was replaced after it was opened"):
            await store.append(kept.id, Message("assistant", (TextBlock("hi"),)))
        assert [s.id for s in await store.list_sessions()] == ["kept"]
        assert (await store.load("kept")).messages == (Message.user("in the backup"),)
        assert await store.search("after") == []
    assert peek().execute("PRAGMA integrity_check").get == "ok"


async def test_database_replaced_by_garbage_then_restored(
    system: ActorSystem, store_dir: Path
) -> None:
    with trio.fail_after(10):
        actor, store = await start(system, store_dir)
        info = await store.create_session(model="m")
        garbage = store_dir / "garbage"
        garbage.write_bytes(os.urandom(8192))
        os.replace(garbage, store_dir / "hermes.db")

        with pytest.raises(
            StoreUnavailable, match=r"store append \(session .*\) failed: .*was replaced"
        ):
            await store.append(info.id, Message.user("hi"))
        # Every request while the file is bad is answered with the reason...
        for _ in range(2):
            with pytest.raises(StoreUnavailable) as error:
                await store.create_session(model="m")
            assert error.value.operation == "create_session"
            assert "file is not a database" in str(error.value)
        assert actor.ctx.self.is_alive

        # ...and once the file is sorted out, the store serves again without a restart.
        for path in db_files(store_dir):
            path.unlink(missing_ok=True)
        assert (await store.create_session(model="m")).model == "m"


async def test_read_only_database(system: ActorSystem, store_dir: Path) -> None:
    with trio.fail_after(10):
        actor, store = await start(system, store_dir)
        info = await store.create_session(model="m")
        # Tests run as root here, where file modes do not stop writes; query_only makes
        # SQLite refuse writes with the same SQLITE_READONLY error a read-only file gives.
        assert actor._db is not None
        actor._db.writer.pragma("query_only", 1)  # small writes run on the inline connection

        with pytest.raises(StoreError) as error:
            await store.append(info.id, Message.user("hi"))
        assert error.value.operation == "append"
        assert "readonly" in str(error.value) and "[ReadOnlyError]" in str(error.value)
        # Reads still work, and the next write goes through a fresh connection.
        assert (await store.get_session(info.id)).message_count == 0
        await store.append(info.id, Message.user("hi"))
        assert (await store.load(info.id)).messages == (Message.user("hi"),)


def file_modes_enforced() -> bool:
    """False when we may write a read-only file anyway (root with CAP_DAC_OVERRIDE)."""
    with tempfile.TemporaryDirectory() as directory:
        probe = Path(directory) / "probe"
        probe.write_text("")
        probe.chmod(0o444)
        try:
            with probe.open("w"):
                return False
        except PermissionError:
            return True


@pytest.mark.skipif(
    not file_modes_enforced(), reason="file modes are not enforced for this user (root)"
)
async def test_read_only_file(store_dir: Path) -> None:
    with trio.fail_after(10):
        async with open_system("writer") as system:
            await (await spawn_store(system, store_dir)).create_session(model="m")
    set_modes(store_dir, 0o444, 0o555)  # and no -wal/-shm can be created
    try:
        with trio.fail_after(10):
            async with open_system("reader") as system:
                with pytest.raises(StoreUnavailable) as error:
                    await spawn_store(system, store_dir)
        assert error.value.operation == "open"
        assert str(store_dir / "hermes.db") in str(error.value)
        assert "[ReadOnlyError]" in str(error.value)
    finally:
        set_modes(store_dir, 0o644, 0o755)


async def test_disk_full(system: ActorSystem, store_dir: Path) -> None:
    config = StoreConfig(max_size_bytes=512 * 1024)
    with trio.fail_after(10):
        _, store = await start(system, store_dir, config)
        info = await store.create_session(model="m")
        with pytest.raises(StoreError) as error:
            await store.append(info.id, Message.user("x" * 2_000_000))
        assert error.value.operation == "append"
        assert "database or disk is full" in str(error.value) and "[FullError]" in str(error.value)
        # The failed write left nothing behind, and smaller writes still fit.
        assert (await store.get_session(info.id)).message_count == 0
        await store.append(info.id, Message.user("small"), expected_seq=0)
        assert (await store.load(info.id)).messages == (Message.user("small"),)


async def test_closed_connection_is_reopened(system: ActorSystem, store_dir: Path) -> None:
    with trio.fail_after(10):
        actor, store = await start(system, store_dir)
        info = await store.create_session(model="m")
        assert actor._db is not None
        actor._db.writer.close()  # small writes run on the inline connection

        with pytest.raises(StoreUnavailable) as error:
            await store.append(info.id, Message.user("hi"))
        assert error.value.operation == "append"
        assert "[ConnectionClosedError]" in str(error.value)

        await store.append(info.id, Message.user("hi"))
        assert actor.reopened == 1
        assert (await store.load(info.id)).messages == (Message.user("hi"),)

        # The same for the worker's connection, which serves reads.
        assert actor._db is not None
        await actor._db.connection.aclose()
        with pytest.raises(StoreUnavailable) as error:
            await store.load(info.id)
        assert "[ConnectionClosedError]" in str(error.value)
        assert (await store.load(info.id)).messages == (Message.user("hi"),)
        assert actor.reopened == 2


@pytest.mark.parametrize(
    ("blob", "fragment"),
    [
        (b"\xc1", "message seq 1: cannot unpack content blocks: not valid msgpack"),
        (
            msgpack.packb([{"type": "text", "text": 7, "cache": False}]),
            "message seq 1: malformed content blocks: [0].text: expected str, got int",
        ),
        (
            msgpack.packb([{"type": "hologram"}]),
            "message seq 1: malformed content blocks: [0]: unknown block type 'hologram'",
        ),
    ],
)
async def test_malformed_blob_on_load(
    store: StoreClient, peek: Peek, blob: bytes, fragment: str
) -> None:
    with trio.fail_after(10):
        bad = await store.create_session(model="m", session_id="bad")
        good = await store.create_session(model="m", session_id="good")
        pair = [Message.user("q"), Message("assistant", (TextBlock("a"),))]
        await store.append(bad.id, pair)
        await store.append(good.id, pair)
        conn = peek()
        conn.execute(
            "UPDATE messages SET content = ? WHERE session_id = 'bad' AND seq = 1", (blob,)
        )

        with pytest.raises(CorruptRecord) as error:
            await store.load("bad")
        assert error.value.operation == "load" and error.value.session_id == "bad"
        assert fragment in str(error.value)
        # Other sessions are unaffected and the store keeps serving.
        assert (await store.load("good")).messages == tuple(pair)
        assert (await store.get_session("bad")).message_count == 2


async def test_missing_row_on_load(store: StoreClient, peek: Peek) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(
            info.id, [Message.user("a"), Message("assistant", (TextBlock("b"),)), Message.user("c")]
        )
        peek().execute("DELETE FROM messages WHERE seq = 1")
        with pytest.raises(CorruptRecord, match="message seq 1 is missing"):
            await store.load(info.id)


async def test_dead_store_is_reported(system: ActorSystem, store_dir: Path) -> None:
    with trio.fail_after(10):
        actor, store = await start(system, store_dir)
        await actor.ctx.self.kill()
        with pytest.raises(StoreUnavailable) as error:
            await store.create_session(model="m")
        assert error.value.operation == "create_session"
        assert "the store actor is not running" in str(error.value)
        assert isinstance(error.value.__cause__, ActorExited)


class _Silent:
    """A call target that never answers in time."""

    async def call(self, message: Any, timeout: float | None = None) -> Any:
        await trio.lowlevel.checkpoint()
        raise CallTimeout("/store", timeout or 5.0, message)


async def test_timeouts_become_store_timeouts() -> None:
    store = StoreClient(_Silent(), timeout=0.5)
    with pytest.raises(StoreTimeout) as error:
        await store.append("s", Message.user("hi"))
    assert str(error.value) == (
        "store append (session 's') failed: no answer within 0.5s "
        "(the write may still have been committed)"
    )
    assert isinstance(error.value.__cause__, CallTimeout)
    with pytest.raises(
        StoreTimeout, match=r"store load \(session 's'\) failed: no answer within 2s$"
    ):
        await store.load("s", timeout=2)


async def test_expired_read_is_not_run(system: ActorSystem, store_dir: Path) -> None:
    with trio.fail_after(10):
        actor, store = await start(system, store_dir)
        info = await store.create_session(model="m")
        ref = actor.ctx.self
        past = trio.current_time() - 1
        with pytest.raises(StoreTimeout, match="deadline passed"):
            await ref.call(LoadSession(info.id, deadline=past))
        assert (await store.get_session(info.id)).id == info.id


async def test_stray_messages(
    system: ActorSystem, store_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with trio.fail_after(10):
        actor, store = await start(system, store_dir)
        ref = actor.ctx.self
        with pytest.raises(InvalidRequest, match="str is not a store request"):
            await ref.call("what?")
        # A cast gets no answer, so the store does not act on it.
        with caplog.at_level(logging.WARNING, logger="hermes.store.actor"):
            assert await ref.cast(CreateSession("m", session_id="cast"))
            await store.list_sessions()
        assert "must be calls" in caplog.text
        with pytest.raises(SessionNotFound):
            await store.get_session("cast")
        assert ref.is_alive
        reason = await ref.stop()
        assert reason == ExitReason.shutdown()


async def test_requests_can_be_sent_directly(system: ActorSystem, store_dir: Path) -> None:
    """The request classes are the protocol; the client is a convenience."""
    with trio.fail_after(10):
        actor, _ = await start(system, store_dir)
        ref = actor.ctx.self
        info = await ref.call(CreateSession("m", session_id="direct"))
        result = await ref.call(AppendMessages("direct", (Message.user("hi"),), expected_seq=0))
        assert result.next_seq == 1
        assert (await ref.call(GetSession(info.id))).message_count == 1
