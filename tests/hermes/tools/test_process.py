"""The process-group runner underneath the terminal tool."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import trio

from hermes import procgroup as process_module
from hermes.procgroup import OutputCapture, enable_subreaper, group_members, run_command

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


def kill_and_reap(pid: int) -> None:
    """A process that left our group on purpose: kill it and reap it (we are its subreaper)."""
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def test_an_empty_group_is_answered_without_reading_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert [m.pid for m in group_members(sleeper.pid)] == [sleeper.pid]  # the scan
    finally:
        sleeper.kill()
        sleeper.wait()

    def no_scan(path: str) -> list[str]:
        raise AssertionError(f"listed {path}")

    monkeypatch.setattr(process_module.os, "listdir", no_scan)
    assert group_members(sleeper.pid) == []  # gone and reaped: one killpg, no scan


def test_capture_keeps_head_and_tail() -> None:
    capture = OutputCapture(limit=10, head=4)
    for chunk in (b"abc", b"defgh", b"ijklmnop"):
        capture.feed(chunk)
    assert capture.total == 16 and capture.dropped == 6
    assert capture.text() == "abcd\n[... 6 bytes of output omitted ...]\nklmnop"
    assert capture.recent(3) == "nop"
    small = OutputCapture(limit=100, head=10)
    small.feed(b"hello world")
    assert small.text() == "hello world" and small.dropped == 0


def test_subreaper() -> None:
    assert enable_subreaper() is True
    assert enable_subreaper() is True


async def test_sigterm_ignored_then_sigkill(tmp_path: Path) -> None:
    with trio.fail_after(10):
        start = time.monotonic()
        result = await run_command(
            ["bash", "-c", "trap '' TERM; sleep 300 & echo $$ $! > pids; wait"],
            cwd=tmp_path,
            env=ENV,
            timeout=0.5,
            grace=0.5,
        )
        elapsed = time.monotonic() - start
    leader, child = (int(p) for p in (tmp_path / "pids").read_text().split())
    assert result.timed_out
    assert result.kill is not None and result.kill.sigkill_sent
    assert result.kill.survivors == () and result.kill.zombies == ()
    assert result.exit_code == 128 + 9
    assert 0.9 <= elapsed < 4
    assert group_members(leader) == []
    assert gone(child)


async def test_exit_status_of_a_signal(tmp_path: Path) -> None:
    with trio.fail_after(10):
        result = await run_command(["bash", "-c", "kill -9 $$"], cwd=tmp_path, env=ENV, timeout=5)
    assert result.exit_code == 137 and not result.timed_out and result.kill is None


async def test_a_missing_program_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await run_command(["/nonexistent/program"], cwd=tmp_path, env=ENV, timeout=5)


async def test_escaped_pipe_holder_does_not_hang(tmp_path: Path) -> None:
    """A process that left the group (setsid) but holds stdout open: bounded drain."""
    with trio.fail_after(10):
        start = time.monotonic()
        result = await run_command(
            # the pause lets the child call setsid() before bash exits and its group is killed
            ["bash", "-c", "setsid sleep 3 & echo $! > pid; sleep 0.3; echo out"],
            cwd=tmp_path,
            env=ENV,
            timeout=5,
            drain_timeout=0.3,
        )
        elapsed = time.monotonic() - start
    assert result.output.startswith("out") and result.exit_code == 0
    assert 0.5 < elapsed < 2.5  # the 0.3 s drain bound, not the 3 s sleep
    kill_and_reap(int((tmp_path / "pid").read_text()))
