"""A transcript's writer epoch: once its owner claims a new one, a writer left behind
is refused (``StaleWriter``) on every transcript write, before the seq checks."""

from __future__ import annotations

import pytest

from hermes.model.types import Message, TextBlock
from hermes.store import SeqConflict, StaleWriter, StoreClient, StoreError


async def test_a_write_under_an_old_epoch_is_refused_and_changes_nothing(
    store: StoreClient,
) -> None:
    info = await store.create_session(model="m")
    sid = info.id
    old = await store.claim_writer(sid)
    await store.append(sid, Message.user("hi"), expected_seq=0, writer=old)
    new = await store.claim_writer(sid)
    assert new == old + 1
    # The left-behind writer is at the transcript's end: the seq check alone would pass.
    reply = Message("assistant", (TextBlock("late"),))
    with pytest.raises(StaleWriter, match=f"writer epoch {old} is stale") as caught:
        await store.append(sid, reply, expected_seq=1, writer=old)
    assert caught.value.writer == old and caught.value.session_id == sid
    with pytest.raises(StaleWriter):
        await store.replace_last(sid, 0, Message.user("over"), writer=old)
    with pytest.raises(StaleWriter):
        await store.truncate(sid, 0, writer=old)
    with pytest.raises(StaleWriter):
        await store.compact(sid, 1, [Message.user("short")], method="test", writer=old)
    transcript = await store.load(sid)
    assert list(transcript.messages) == [Message.user("hi")]
    # The current writer writes; a write without an epoch is not checked; seqs still are.
    await store.append(sid, reply, expected_seq=1, writer=new)
    await store.append(sid, Message.user("more"), expected_seq=2)
    with pytest.raises(SeqConflict):
        await store.append(sid, Message("assistant", (TextBlock("x"),)), expected_seq=1, writer=new)
    assert len((await store.load(sid)).messages) == 3


async def test_claiming_an_unknown_session_is_a_clear_error(store: StoreClient) -> None:
    with pytest.raises(StoreError, match="nope"):
        await store.claim_writer("nope")
