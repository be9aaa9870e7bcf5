"""Unattended writes (``StoreClient.submit``): queued in order, not waited for, failures logged."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from actors import ActorRef, ActorSystem
from hermes.model.types import Message, TextBlock
from hermes.store import StoreClient, spawn_store
from hermes.store.requests import LoadSession, Unattended


def through_the_mailbox(store: StoreClient) -> StoreClient:
    """A client without the lane, so a submitted write is always cast to the actor."""
    return StoreClient(store.target)


@pytest.mark.parametrize("lane", [True, False])
async def test_a_submitted_write_is_committed_in_order_with_what_follows(
    store: StoreClient, lane: bool
) -> None:
    client = store if lane else through_the_mailbox(store)
    info = await store.create_session(model="m")
    assert client.submit_append(info.id, Message.user("first"), expected_seq=0) is True
    # Queued before it, so committed before it: this append expects seq 1.
    await client.append(info.id, Message("assistant", (TextBlock("second"),)), expected_seq=1)
    transcript = await store.load(info.id)
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
    assert transcript.messages[0] == Message.user("first")


@pytest.mark.parametrize("lane", [True, False])
async def test_a_submitted_write_that_fails_is_logged_by_name(
    store: StoreClient, lane: bool, caplog: pytest.LogCaptureFixture
) -> None:
    client = store if lane else through_the_mailbox(store)
    info = await store.create_session(model="m")
    await store.end_session(info.id, "over")
    with caplog.at_level(logging.WARNING, logger="hermes.store"):
        assert client.submit_append(info.id, Message.user("late"), expected_seq=0) is True
        await store.get_session(info.id)  # served after the submitted write
    assert "unattended append failed" in caplog.text
    assert (await store.load(info.id)).messages == ()


async def test_only_writes_may_be_submitted(store: StoreClient) -> None:
    with pytest.raises(ValueError, match="only writes"):
        store.submit(LoadSession("any"))


async def test_an_unattended_read_cast_to_the_store_is_dropped_with_a_warning(
    store: StoreClient, caplog: pytest.LogCaptureFixture
) -> None:
    target = store.target
    assert isinstance(target, ActorRef)
    with caplog.at_level(logging.WARNING, logger="hermes.store"):
        assert target.cast_nowait(Unattended(LoadSession("any")))
        await store.create_session(model="m")  # served after the cast
    assert "only writes may be sent unattended" in caplog.text


async def test_a_write_submitted_just_before_the_store_stops_is_still_made(
    system: ActorSystem, store: StoreClient, store_dir: Path
) -> None:
    info = await store.create_session(model="m")
    target = store.target
    assert isinstance(target, ActorRef)
    client = through_the_mailbox(store)
    sent = [
        Message("user" if seq % 2 == 0 else "assistant", (TextBlock(f"m{seq}"),))
        for seq in range(3)
    ]
    for seq, message in enumerate(sent):
        assert client.submit_append(info.id, message, expected_seq=seq)
    await target.stop()  # its stop jumps the queue: the writes are served first
    reopened = await spawn_store(system, store_dir, register=None)
    assert (await reopened.load(info.id)).messages == tuple(sent)


async def test_a_store_that_is_gone_takes_no_submitted_write(store: StoreClient) -> None:
    info = await store.create_session(model="m")
    target = store.target
    assert isinstance(target, ActorRef)
    await target.stop()
    client = through_the_mailbox(store)
    assert client.submit_append(info.id, Message.user("lost?"), expected_seq=0) is False
