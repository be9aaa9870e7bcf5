"""Many callers at once, callers that give up, and a store killed mid-write."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
import trio
import trio.lowlevel

from actors import ActorSystem, open_system
from hermes import codec
from hermes.model.types import Message, TextBlock
from hermes.store import StoreActor, StoreClient, StoreError, StoreUnavailable, spawn_store

Peek = Callable[[], apsw.Connection]


def turn(session: int, n: int) -> Message:
    role = "user" if n % 2 == 0 else "assistant"
    return Message(role, (TextBlock(f"session {session} message {n}"),))


def batch(size: int, word: str = "filler") -> list[Message]:
    return [
        Message("user" if i % 2 == 0 else "assistant", (TextBlock(f"{word} {i} " * 20),))
        for i in range(size)
    ]


def worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if "apsw" in t.name]


async def test_many_writers_to_different_sessions(store: StoreClient, peek: Peek) -> None:
    sessions, per_session = 40, 25
    with trio.fail_after(60):
        ids = [
            (await store.create_session(model="m", session_id=f"s{i:02d}")).id
            for i in range(sessions)
        ]

        async def writer(index: int) -> None:
            for n in range(per_session):
                await store.append(ids[index], turn(index, n), expected_seq=n)
                if n % 7 == 0:
                    await trio.lowlevel.checkpoint()

        async with trio.open_nursery() as nursery:
            for index in range(sessions):
                nursery.start_soon(writer, index)

        for index, session_id in enumerate(ids):
            transcript = await store.load(session_id)
            assert transcript.messages == tuple(turn(index, n) for n in range(per_session))
    conn = peek()
    assert conn.execute("SELECT count(*) FROM messages").get == sessions * per_session
    assert conn.execute("PRAGMA integrity_check").get == "ok"


async def test_readers_and_writers_interleave(store: StoreClient) -> None:
    with trio.fail_after(30):
        info = await store.create_session(model="m")
        seen: dict[int, list[int]] = {1: [], 2: []}

        async def write() -> None:
            for n in range(60):
                await store.append(info.id, turn(0, n), expected_seq=n)

        async def read(reader: int) -> None:
            for _ in range(60):
                transcript = await store.load(info.id)
                # Every read sees a whole prefix: never a half-applied write.
                assert transcript.messages == tuple(turn(0, n) for n in range(transcript.next_seq))
                seen[reader].append(transcript.next_seq)
                await trio.lowlevel.checkpoint()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(write)
            nursery.start_soon(read, 1)
            nursery.start_soon(read, 2)
        # Each reader sees the transcript only grow, one committed write at a time.
        for counts in seen.values():
            assert counts == sorted(counts)
        assert (await store.get_session(info.id)).message_count == 60


async def test_cancelled_caller_leaves_all_or_nothing(store: StoreClient, peek: Peek) -> None:
    big = batch(2000)
    with trio.fail_after(60):
        info = await store.create_session(model="m")
        with trio.move_on_after(0.001) as scope:
            await store.append(info.id, big, expected_seq=0)
        assert scope.cancelled_caught

        # The store finished (or never started) the write; either way it is whole.
        count = (await store.get_session(info.id)).message_count
        assert count in (0, len(big))
        # A retry with the same expected_seq is safe whichever happened.
        result = await store.append(info.id, big, expected_seq=0)
        assert result.replayed == (count == len(big))
        assert (await store.load(info.id)).messages == tuple(big)
        await store.append(info.id, Message.user("next"), expected_seq=len(big))
    assert peek().execute("PRAGMA integrity_check").get == "ok"


async def test_kill_mid_write_is_prompt_and_atomic(store_dir: Path, peek: Peek) -> None:
    big = batch(20_000, "bulk")
    with trio.fail_after(60):
        async with open_system("doomed", kill_grace=1.0) as system:
            actor = StoreActor(store_dir)
            ref = await system.spawn(actor, name="store")
            store = StoreClient(ref, timeout=30)
            info = await store.create_session(model="m")
            await store.append(info.id, Message.user("before"), expected_seq=0)
            outcome: list[BaseException | None] = []

            async def append_big() -> None:
                try:
                    await store.append(info.id, big[1:], expected_seq=1)
                    outcome.append(None)
                except StoreError as exc:
                    outcome.append(exc)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(append_big)
                await trio.sleep(0.05)  # the store is inside the big transaction now
                started = trio.current_time()
                reason = await ref.kill()
                elapsed = trio.current_time() - started
            # trio mode: the kill does not wait for the statement; it is not unkillable.
            assert reason.kind.value == "cancelled", reason
            assert elapsed < 1.0
            assert system.unkillable() == []
            (error,) = outcome
            assert isinstance(error, StoreUnavailable), error
            assert "the store actor is not running" in str(error)

        async with open_system("after") as system:
            store = await spawn_store(system, store_dir)
            transcript = await store.load(info.id)
            # All or nothing: the killed transaction was rolled back as a whole.
            assert transcript.next_seq in (1, len(big))
            assert transcript.messages[0] == Message.user("before")
            if transcript.next_seq == 1:
                await store.append(info.id, big[1:3], expected_seq=1)
    assert peek().execute("PRAGMA integrity_check").get == "ok"


async def test_no_worker_thread_outlives_the_store(store_dir: Path) -> None:
    before = len(worker_threads())
    with trio.fail_after(30):
        async with open_system("threads") as system:
            actor = StoreActor(store_dir)
            ref = await system.spawn(actor, name="store")
            store = StoreClient(ref)
            await store.create_session(model="m")
            # The store's connection and its checkpointer's (opened at its start).
            assert len(worker_threads()) == before + 2
            # A dropped connection is closed before the next one opens.
            assert actor._db is not None
            await actor._db.connection.aclose()
            with pytest.raises(StoreUnavailable):
                await store.list_sessions()
            await store.list_sessions()
            assert actor.reopened == 1
            assert len(worker_threads()) == before + 2
        for _ in range(100):
            if len(worker_threads()) == before:
                break
            await trio.sleep(0.01)
    assert len(worker_threads()) == before


async def test_racing_appends_to_one_session(system: ActorSystem, store_dir: Path) -> None:
    with trio.fail_after(30):
        store = await spawn_store(system, store_dir, register=None)
        info = await store.create_session(model="m")
        done: list[int] = []

        async def write(n: int) -> None:
            try:
                await store.append(info.id, turn(0, n), expected_seq=n)
                done.append(n)
            except StoreError:
                pass

        async with trio.open_nursery() as nursery:
            for n in range(20):
                nursery.start_soon(write, n)
            await trio.lowlevel.checkpoint()
        loaded = await store.load(info.id)
        # Concurrent appends with expected_seq: each either landed in order or was refused.
        assert loaded.messages == tuple(turn(0, n) for n in range(loaded.next_seq))
        assert sorted(done) == list(range(loaded.next_seq))
        packed = [codec.pack(m) for m in loaded.messages]
        assert len(set(packed)) == len(packed)
