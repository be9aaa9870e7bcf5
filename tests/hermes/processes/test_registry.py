"""Starting background processes and the process tool's operations, with real subprocesses."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import trio

from hermes.bell import Bell
from hermes.processes import (
    ProcessNotFound,
    ProcessNotRunning,
    ProcessStartFailed,
    ProcessStatus,
    StdinClosed,
    WaitOutcome,
)
from hermes.procgroup import group_members

from .helpers import ENV, StartRegistry, proc_exists


async def test_start_returns_at_once_then_poll_and_wait(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        began = time.monotonic()
        info = await svc.start(
            "echo out; echo err >&2; sleep 0.3; echo $$ > pid; exit 3", cwd=str(tmp_path), env=ENV
        )
        assert time.monotonic() - began < 0.25  # did not wait for the 0.3 s sleep
        assert info.status is ProcessStatus.RUNNING and info.pid == info.pgid > 0
        assert info.id.startswith("proc_")
        polled = await svc.poll(info.id)
        assert polled.info.status is ProcessStatus.RUNNING and polled.info.exit_code is None
        result = await svc.wait(info.id, 5)
    assert result.outcome is WaitOutcome.FINISHED
    assert result.info.status is ProcessStatus.EXITED and result.info.exit_code == 3
    assert result.tail == "out\nerr\n"  # stdout and stderr merged, in order
    assert int((tmp_path / "pid").read_text()) == info.pid
    assert not proc_exists(info.pid) and group_members(info.pgid) == []  # reaped, no zombie
    listed = await svc.list()
    assert [(p.id, p.status, p.exit_code) for p in listed] == [(info.id, ProcessStatus.EXITED, 3)]


async def test_poll_returns_the_last_thousand_characters(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start(
            "for i in $(seq 1 500); do echo line-$i; done", cwd=str(tmp_path), env=ENV
        )
        await svc.wait(info.id, 5)
        polled = await svc.poll(info.id)
    assert len(polled.tail) == 1000 and polled.tail.endswith("line-500\n")
    assert polled.info.output_chars == sum(len(f"line-{i}\n") for i in range(1, 501))


async def test_log_pages_by_absolute_offset(start_registry: StartRegistry, tmp_path: Path) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start("printf 'abcdefghij%.0s' $(seq 1 10)", cwd=str(tmp_path), env=ENV)
        await svc.wait(info.id, 5)
        first = await svc.log(info.id, 0, 30)
        second = await svc.log(info.id, first.page.next_offset, 30)
        last = await svc.log(info.id)  # default: the last page
    assert first.page.text == "abcdefghij" * 3 and first.page.next_offset == 30
    assert second.page.offset == 30 and second.page.more
    assert last.page.text == "abcdefghij" * 10 and not last.page.more


async def test_output_without_newlines_over_64_kib_never_deadlocks(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start(
            "head -c 1000000 /dev/zero | tr '\\0' x; echo; echo done",
            cwd=str(tmp_path),
            env=ENV,
            watch_patterns=["done"],
        )
        result = await svc.wait(info.id, 8)
        page = await svc.log(info.id, 0, 100)
    assert result.outcome is WaitOutcome.FINISHED and result.info.exit_code == 0
    assert result.info.output_chars == 1_000_000 + 1 + 5
    assert page.page.skipped == 1_000_006 - 200_000  # rolling: the last 200,000 kept
    assert page.page.offset == 800_006 and page.page.text == "x" * 100
    assert result.tail.endswith("x\ndone\n")


async def test_write_submit_and_close_stdin(start_registry: StartRegistry, tmp_path: Path) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start(
            "while read line; do echo got:$line; done; echo eof", cwd=str(tmp_path), env=ENV
        )
        assert await svc.write(info.id, "par") == 3
        assert await svc.submit(info.id, "tial") == 5
        assert await svc.submit(info.id, "two") == 4
        closed = await svc.close_stdin(info.id)
        assert not closed.stdin_open
        result = await svc.wait(info.id, 5)
        assert result.tail == "got:partial\ngot:two\neof\n"
        with pytest.raises(ProcessNotRunning, match="has finished"):
            await svc.write(info.id, "late")


async def test_write_to_closed_stdin_is_a_clear_error(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start("sleep 30", cwd=str(tmp_path), env=ENV)
        await svc.close_stdin(info.id)
        with pytest.raises(StdinClosed, match=r"stdin of background process \S+ is closed"):
            await svc.submit(info.id, "x")
        await svc.kill(info.id)


async def test_wait_times_out_or_returns_early_on_interrupt(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start("echo started; sleep 30", cwd=str(tmp_path), env=ENV)
        began = time.monotonic()
        timed_out = await svc.wait(info.id, 0.3)
        assert timed_out.outcome is WaitOutcome.TIMEOUT
        assert 0.25 <= time.monotonic() - began < 1.5
        interrupt = Bell()

        async def press() -> None:
            await trio.sleep(0.2)
            interrupt.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(press)
            began = time.monotonic()
            interrupted = await svc.wait(info.id, 60, interrupt=interrupt)
        assert interrupted.outcome is WaitOutcome.INTERRUPTED
        assert time.monotonic() - began < 1.0
        assert interrupted.info.status is ProcessStatus.RUNNING  # waiting stopped, not the process
        assert interrupted.tail == "started\n"
        killed = await svc.kill(info.id)
    assert killed.status is ProcessStatus.KILLED


async def test_errors_are_clear(start_registry: StartRegistry, tmp_path: Path) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        with pytest.raises(ProcessNotFound, match="No background process 'proc_nope'"):
            await svc.poll("proc_nope")
        with pytest.raises(ProcessStartFailed, match="is not a directory"):
            await svc.start("true", cwd=str(tmp_path / "missing"), env=ENV)
        with pytest.raises(ProcessStartFailed, match="empty"):
            await svc.start("  ", cwd=str(tmp_path), env=ENV)
        assert await svc.list() == []  # nothing half-started is listed
        # The registry is still serving after the errors.
        info = await svc.start("echo fine", cwd=str(tmp_path), env=ENV)
        assert (await svc.wait(info.id, 5)).tail == "fine\n"


async def test_a_note_is_kept_once_and_shown_with_the_state(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start("echo fine", cwd=str(tmp_path), env=ENV)
        await svc.note(info.id, "moved on a redirect")
        noted = await svc.note(info.id, "moved on a redirect")
        polled = await svc.poll(info.id)
        with pytest.raises(ProcessNotFound, match="No background process 'proc_nope'"):
            await svc.note("proc_nope", "anything")
    assert noted.note == polled.info.note == "moved on a redirect"


async def test_environment_and_cwd_reach_the_command(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry()
    real = await trio.Path(tmp_path).resolve()
    with trio.fail_after(10):
        info = await svc.start(
            "echo $MARK; pwd", cwd=str(tmp_path), env={**ENV, "MARK": "hello-env"}
        )
        result = await svc.wait(info.id, 5)
    assert result.tail == f"hello-env\n{real}\n"
