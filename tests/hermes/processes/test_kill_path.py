"""The hard-stop path of a watcher: one wait per kill, pipes closed at once."""

from __future__ import annotations

import os
import signal

import pytest
import trio
import trio.testing

from hermes.processes.watcher_base import close_pipe
from hermes.procgroup import KillReport, group_empty, kill_group


async def test_kill_group_of_a_term_obeying_group_reaps_without_sigkill() -> None:
    process = await trio.lowlevel.open_process(["sleep", "300"], start_new_session=True)
    with trio.fail_after(5):
        report = await kill_group(process, grace=2.0, kill_wait=2.0)
    assert report == KillReport(False, (), ())
    assert process.returncode == -signal.SIGTERM
    assert group_empty(process.pid)


async def test_close_pipe_closes_an_fd_stream_at_once() -> None:
    read_fd, write_fd = os.pipe()
    reader, writer = trio.lowlevel.FdStream(read_fd), trio.lowlevel.FdStream(write_fd)
    await close_pipe(writer)
    assert writer.fileno() == -1
    assert await reader.receive_some(10) == b""  # the writer is really gone
    await close_pipe(reader)
    assert reader.fileno() == -1


async def test_close_pipe_acloses_other_streams() -> None:
    stream = trio.testing.MemorySendStream()
    await close_pipe(stream)
    with pytest.raises(trio.ClosedResourceError):
        await stream.send_all(b"x")
