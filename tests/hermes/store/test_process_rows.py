"""Process rows: a finish is recorded once (the first wins), with clear errors."""

from __future__ import annotations

import pytest
import trio

from hermes.store import InvalidRequest, ProcessRecord, StoreClient


def record(process_id: str) -> ProcessRecord:
    return ProcessRecord(
        id=process_id,
        session_id="s1",
        command="sleep 300",
        cwd="/tmp",
        pid=4242,
        pgid=4242,
        start_time=123,
        boot_id="boot",
        owner_pid=1,
        owner_start_time=1,
        started_at=1.0,
    )


async def test_the_first_finish_wins(store: StoreClient) -> None:
    with trio.fail_after(10):
        await store.record_process_start(record("p1"))
        done = await store.record_process_finish("p1", "killed", -9)
        assert (done.status, done.exit_code, done.active) == ("killed", -9, False)
        assert done.finished_at is not None and done.command == "sleep 300"
        again = await store.record_process_finish("p1", "exited", 0)
        assert again == done  # idempotent: the row is not touched again
        (listed,) = await store.list_processes(session_id="s1")
    assert listed == done


async def test_a_bad_finish_is_refused_and_changes_nothing(store: StoreClient) -> None:
    with trio.fail_after(10):
        await store.record_process_start(record("p2"))
        with pytest.raises(InvalidRequest, match="no process record with id 'nope'"):
            await store.record_process_finish("nope", "exited", 0)
        with pytest.raises(InvalidRequest, match="status must be 'exited', 'killed' or 'lost'"):
            await store.record_process_finish("p2", "running")
        with pytest.raises(InvalidRequest, match="exit_code must be an int or None"):
            await store.record_process_finish("p2", "exited", "0")  # type: ignore[arg-type]
        (listed,) = await store.list_processes(session_id="s1")
    assert listed.active and listed.exit_code is None
