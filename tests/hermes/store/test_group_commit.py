"""Small writes that arrive together commit as one group; one failing fails alone."""

from __future__ import annotations

import pytest
import trio

from hermes.model.types import Message
from hermes.store import SessionEnded, StoreClient, StoreError


async def test_concurrent_small_writes_commit_together_and_fail_alone(store: StoreClient) -> None:
    infos = [await store.create_session(model="m") for _ in range(20)]
    await store.end_session(infos[7].id, "already over")  # its append must fail, alone
    results: dict[int, object] = {}

    async def append(i: int) -> None:
        try:
            results[i] = await store.append(infos[i].id, Message.user(f"hi {i}"), expected_seq=0)
        except StoreError as exc:
            results[i] = exc

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(append, i)
    assert isinstance(results[7], SessionEnded)
    for i, info in enumerate(infos):
        transcript = await store.load(info.id)
        expected = () if i == 7 else (Message.user(f"hi {i}"),)
        assert transcript.messages == expected, i


async def test_end_sessions_ends_the_open_ones_in_one_request(store: StoreClient) -> None:
    a, b, c = [await store.create_session(model="m") for _ in range(3)]
    await store.end_session(b.id, "earlier")
    ended = await store.end_sessions([a.id, b.id, "no-such-session", c.id], "subagent interrupted")
    assert ended == (a.id, c.id)
    for info, reason in ((a, "subagent interrupted"), (b, "earlier"), (c, "subagent interrupted")):
        row = await store.get_session(info.id)
        assert row.ended_at is not None and row.end_reason == reason
    with pytest.raises(StoreError, match="reason"):
        await store.end_sessions([a.id], "")
