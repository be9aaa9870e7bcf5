"""The store's lane: small writes in the caller's task while the store is idle, in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from actors import ActorRef, ActorSystem
from hermes.model.types import Message
from hermes.store import (
    LoadSession,
    Request,
    SeqConflict,
    SessionEnded,
    StoreActor,
    StoreClient,
    StoreError,
    StoreLane,
    StoreUnavailable,
)
from hermes.store.database import Database

from .helpers import reply


class CountingTarget:
    """Calls the store actor and counts the requests that went through its mailbox."""

    def __init__(self, ref: ActorRef) -> None:
        self.ref = ref
        self.sent: list[str] = []

    async def call(self, message: Any, timeout: float | None = None) -> Any:
        assert isinstance(message, Request)
        self.sent.append(message.op)
        return await self.ref.call(message, timeout)


async def laned(
    system: ActorSystem, store_dir: Path
) -> tuple[StoreClient, CountingTarget, ActorRef]:
    store, target, ref, _ = await laned_actor(system, store_dir)
    return store, target, ref


async def laned_actor(
    system: ActorSystem, store_dir: Path
) -> tuple[StoreClient, CountingTarget, ActorRef, StoreActor]:
    lane = StoreLane()
    actor = StoreActor(store_dir, None, lane)
    ref = await system.spawn(actor, name="store")
    target = CountingTarget(ref)
    assert lane.attached
    return StoreClient(target, lane=lane), target, ref, actor


async def test_an_idle_store_takes_small_writes_without_its_mailbox(
    system: ActorSystem, store_dir: Path
) -> None:
    store, target, _ = await laned(system, store_dir)
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, Message.user("hello"), expected_seq=0)
        await store.append(info.id, reply("hi"), expected_seq=1)
        assert target.sent == []
        transcript = await store.load(info.id)  # a read: through the mailbox
    assert target.sent == ["load"]
    assert transcript.messages == (Message.user("hello"), reply("hi"))


async def test_lane_failures_are_the_usual_store_errors(
    system: ActorSystem, store_dir: Path
) -> None:
    store, target, _ = await laned(system, store_dir)
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, Message.user("one"), expected_seq=0)
        with pytest.raises(SeqConflict, match="expected to append at seq 5"):
            await store.append(info.id, reply("x"), expected_seq=5)
        await store.end_session(info.id, "done")
        with pytest.raises(SessionEnded):
            await store.append(info.id, reply("late"), expected_seq=1)
        assert target.sent == []
        assert (await store.load(info.id)).messages == (Message.user("one"),)


async def test_a_write_waits_behind_the_request_the_store_is_serving(
    system: ActorSystem, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, target, _ = await laned(system, store_dir)
    info = await store.create_session(model="m")
    gate = trio.Event()
    run = Database.run

    async def held_load(self: Database, request: Request) -> Any:
        if isinstance(request, LoadSession):
            await gate.wait()
        return await run(self, request)

    monkeypatch.setattr(Database, "run", held_load)
    order: list[str] = []

    async def load() -> None:
        transcript = await store.load(info.id)
        order.append(f"load saw {len(transcript.messages)}")

    async def append() -> None:
        await store.append(info.id, Message.user("after the load"), expected_seq=0)
        order.append("appended")

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(load)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(append)
            await trio.testing.wait_all_tasks_blocked()
            assert order == []  # the store is busy with the load: the write queued behind it
            assert target.sent == ["load", "append"]
            gate.set()
    # Served in arrival order: the load ran first and did not see the write.
    assert sorted(order) == ["appended", "load saw 0"]


async def test_a_burst_of_writes_commits_once_in_the_lane(
    system: ActorSystem, store_dir: Path
) -> None:
    store, target, _, actor = await laned_actor(system, store_dir)
    infos = [await store.create_session(model="m") for _ in range(20)]
    await store.end_session(infos[7].id, "already over")  # its append fails, alone
    assert target.sent == []
    commits = actor.commits
    results: dict[int, object] = {}

    async def append(i: int) -> None:
        try:
            results[i] = await store.append(infos[i].id, Message.user("settled"), expected_seq=0)
        except StoreError as exc:
            results[i] = exc

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(append, i)
    # Twenty writers ready at once: one transaction, run in the lane, no mailbox.
    assert target.sent == []
    assert actor.commits == commits + 1
    assert actor.grouped == 20
    assert isinstance(results[7], SessionEnded)
    for i, info in enumerate(infos):
        expected = () if i == 7 else (Message.user("settled"),)
        assert (await store.load(info.id)).messages == expected, i


async def test_a_group_whose_store_got_busy_goes_to_the_mailbox(
    system: ActorSystem, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, target, _ = await laned(system, store_dir)
    infos = [await store.create_session(model="m") for _ in range(5)]
    gate = trio.Event()
    run = Database.run

    async def held_load(self: Database, request: Request) -> Any:
        if isinstance(request, LoadSession):
            await gate.wait()
        return await run(self, request)

    monkeypatch.setattr(Database, "run", held_load)

    async def append(session_id: str) -> None:
        await store.append(session_id, Message.user("later"), expected_seq=0)

    async def load() -> None:
        await store.load(infos[0].id)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            for info in infos:
                nursery.start_soon(append, info.id)
            nursery.start_soon(load)  # reaches the mailbox while the group gathers
            await trio.testing.wait_all_tasks_blocked()
            assert sorted(target.sent) == ["append"] * 5 + ["load"]
            gate.set()
    for info in infos:
        assert (await store.load(info.id)).messages == (Message.user("later"),)


async def test_a_stopped_store_leaves_its_lane(system: ActorSystem, store_dir: Path) -> None:
    store, _, ref = await laned(system, store_dir)
    info = await store.create_session(model="m")
    await ref.stop()
    assert store.lane is not None and not store.lane.attached
    with trio.fail_after(10), pytest.raises(StoreUnavailable, match="not running"):
        await store.append(info.id, Message.user("too late"), expected_seq=0)


async def test_writers_of_other_tasks_one_after_another_each_take_the_lane(
    system: ActorSystem, store_dir: Path
) -> None:
    store, target, _ = await laned(system, store_dir)
    infos = [await store.create_session(model="m") for _ in range(3)]

    async def append(session_id: str) -> None:
        await store.append(session_id, Message.user("alone"), expected_seq=0)

    with trio.fail_after(10):
        for info in infos:  # each writer in a task of its own, none ready beside another
            async with trio.open_nursery() as nursery:
                nursery.start_soon(append, info.id)
    assert target.sent == []  # no burst: each write ran in its writer's task
    for info in infos:
        assert (await store.load(info.id)).messages == (Message.user("alone"),)


async def test_a_cancelled_writer_does_not_write_through_the_lane(
    system: ActorSystem, store_dir: Path
) -> None:
    store, target, _ = await laned(system, store_dir)
    info = await store.create_session(model="m")
    with trio.CancelScope() as scope:
        scope.cancel()
        await store.append(info.id, Message.user("never"), expected_seq=0)
    assert scope.cancelled_caught
    assert target.sent == []
    assert (await store.load(info.id)).messages == ()
