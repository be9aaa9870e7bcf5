"""Foreground commands' group rows: a tool call id, filtered apart, deleted once reaped."""

from __future__ import annotations

import attrs
import pytest
import trio

from hermes.store import InvalidRequest, ProcessRecord, StoreClient


def record(process_id: str, tool_use_id: str | None) -> ProcessRecord:
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
        tool_use_id=tool_use_id,
    )


async def test_foreground_rows_carry_their_call_and_are_listed_apart(store: StoreClient) -> None:
    with trio.fail_after(10):
        await store.record_process_start(record("proc_bg", None))
        stored = await store.record_process_start(record("fg_1", "toolu_1"))
        assert stored.tool_use_id == "toolu_1" and stored.foreground
        (fg,) = await store.list_processes(session_id="s1", foreground=True)
        (bg,) = await store.list_processes(session_id="s1", foreground=False)
        both = await store.list_processes(session_id="s1")
    assert (fg.id, bg.id, bg.foreground) == ("fg_1", "proc_bg", False)
    assert sorted(r.id for r in both) == ["fg_1", "proc_bg"]


async def test_a_forgotten_row_is_gone_and_forgetting_twice_is_harmless(
    store: StoreClient,
) -> None:
    with trio.fail_after(10):
        await store.record_process_start(record("fg_2", "toolu_2"))
        assert await store.forget_process("fg_2") is True
        assert await store.forget_process("fg_2") is False
        assert await store.list_processes(session_id="s1") == []
        assert store.submit_forget_process("fg_nope")  # queued; nothing to delete


async def test_bad_foreground_fields_are_refused(store: StoreClient) -> None:
    with trio.fail_after(10):
        with pytest.raises(InvalidRequest, match="tool_use_id must be None or a non-empty str"):
            await store.record_process_start(attrs.evolve(record("fg_3", None), tool_use_id=""))
        with pytest.raises(InvalidRequest, match="process_id must be a non-empty str"):
            await store.forget_process("")
        with pytest.raises(InvalidRequest, match="foreground must be a bool or None"):
            await store.list_processes(foreground=1)  # type: ignore[arg-type]
        assert await store.list_processes() == []
