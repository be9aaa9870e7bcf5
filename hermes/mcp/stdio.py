"""The stdio transport: an MCP server as a child process in its own process group.

The SDK's ``stdio_client`` merges a default environment (``HOME``, ``PATH``,
``USER``...) into the child's; Hermes passes exactly the configured ``env``
and nothing else, so this transport spawns the process itself. The messages
are still the SDK's: each stdout line is parsed with ``mcp_types``'
JSON-RPC adapter and each outgoing ``SessionMessage`` dumped by pydantic;
nothing of the protocol is written here.

- The command is looked up on the *daemon's* PATH (``shutil.which``), so
  ``command = "npx"`` works even when the child gets no PATH.
- The child starts in a new session (its own process group), stdin and
  stdout are the JSON-RPC pipes, stderr is kept as a bounded tail for error
  reports (``Exited.describe``).
- Leaving the context (normally, on an error or cancelled) closes stdin,
  gives the server ``grace`` seconds to exit, then SIGTERMs and SIGKILLs the
  group and reaps it (``hermes.tools.kill_group``), shielded and bounded.
- A line longer than ``max_line`` bytes ends the connection: a server that
  never sends a newline cannot make the daemon buffer without limit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import attrs
import mcp_types
import trio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from hermes.procgroup import kill_group

MAX_LINE = 64 << 20
STREAM_BUFFER = 16

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]
"""What a transport yields: the SDK's read and write streams for a ``ClientSession``."""
STDERR_TAIL = 4000


@attrs.define(slots=True)
class Exited:
    """What the transport saw of its process: exit status, stderr tail, why the pipe ended."""

    pid: int = 0
    on_spawn: Callable[[int], None] | None = None
    """Called with the server's pid once it is spawned."""
    returncode: int | None = None
    stderr: bytearray = attrs.field(factory=bytearray)
    problem: str | None = None
    closed: trio.Event = attrs.field(factory=trio.Event)
    """Set once stdout has ended (the server exited or closed it) or the transport broke."""
    ended_first: bool = False
    """The pipe ended before the transport began stopping the server (it exited by itself)."""
    on_close: Callable[[], None] | None = None
    """Called once on close: the owner's wake-up call."""

    def close(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            if self.on_close is not None:
                self.on_close()

    def describe(self) -> str:
        if self.problem is not None:
            what = self.problem
        elif self.returncode is not None:
            what = f"the server exited with code {self.returncode}"
        else:
            what = "the server closed its stdout"
        tail = self.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        return what + (f"; stderr: {' | '.join(tail)[-400:]}" if tail else "")


def resolve_command(command: str, cwd: str | None) -> str:
    """An absolute path for ``command`` (on the daemon's PATH), or ``FileNotFoundError``."""
    if os.sep in command:
        path = Path(command).expanduser()
        if not path.is_absolute() and cwd is not None:
            path = Path(cwd).expanduser() / path
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise FileNotFoundError(f"command {command!r} is not an executable file")
        return str(path)
    found = shutil.which(command)
    if found is None:
        raise FileNotFoundError(f"command {command!r} not found on the daemon's PATH")
    return found


@asynccontextmanager
async def stdio_transport(
    argv: list[str],
    env: Mapping[str, str],
    cwd: str | None,
    exited: Exited,
    *,
    grace: float = 0.5,
    max_line: int = MAX_LINE,
) -> AsyncIterator[Streams]:
    """Run ``argv`` and yield the SDK's stream pair for a ``ClientSession`` over its pipes."""
    process = await trio.lowlevel.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
    )
    exited.pid = process.pid
    if exited.on_spawn is not None:
        exited.on_spawn(process.pid)
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](
        STREAM_BUFFER
    )
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](STREAM_BUFFER)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr

    async def read_stdout() -> None:
        buffer = bytearray()
        try:
            async with read_send:
                while True:
                    chunk = await stdout.receive_some(1 << 16)
                    if not chunk:
                        return
                    start = 0
                    buffer += chunk
                    while (end := buffer.find(b"\n", start)) >= 0:
                        line = bytes(buffer[start:end])
                        start = end + 1
                        if line.strip():
                            await read_send.send(_parse(line))
                    del buffer[:start]
                    if len(buffer) > max_line:
                        exited.problem = f"the server sent a line over {max_line:,} bytes"
                        return
        except (trio.BrokenResourceError, trio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            exited.close()

    async def write_stdin() -> None:
        try:
            async with write_recv:
                async for message in write_recv:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send_all(data.encode("utf-8") + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            exited.problem = exited.problem or "the server's stdin is closed"
            exited.close()

    async def read_stderr() -> None:
        try:
            while chunk := await stderr.receive_some(1 << 14):
                exited.stderr += chunk
                del exited.stderr[: max(0, len(exited.stderr) - STDERR_TAIL)]
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(read_stdout)
            nursery.start_soon(write_stdin)
            nursery.start_soon(read_stderr)
            try:
                yield read_recv, write_send
            finally:
                nursery.cancel_scope.cancel()
    finally:
        exited.ended_first = exited.closed.is_set()
        with trio.CancelScope(shield=True, deadline=trio.current_time() + grace + 5.0):
            await _stop(process, grace)
            exited.returncode = process.returncode
            for stream in (read_recv, write_send):
                stream.close()


async def _stop(process: trio.Process, grace: float) -> None:
    """Close stdin, wait ``grace`` for the server to exit, then kill and reap its group."""
    assert process.stdin is not None
    with suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        await process.stdin.aclose()
    with trio.move_on_after(grace):
        await process.wait()
    await kill_group(process, grace=0.2 if process.returncode is None else 0.0, kill_wait=2.0)
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            await pipe.aclose()


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return ValueError(f"malformed message from the server: {str(exc)[:200]}")
