"""``OutputPump``: the watcher's two owned tasks that read the pipe and wait for the exit.

A watcher must keep answering its mailbox (kill, stdin) while output flows, so
the blocking waits run as tasks the watcher owns (``ctx.start_task``), not in
its receive loop: one reads the pipe in chunks of up to 64 KiB (never by
line, so output without newlines cannot stall it) and casts each chunk to the
watcher; the other waits for the leader's exit status. The watcher's mailbox
is bounded with ``BLOCK``: a watcher that falls behind slows the reader, and
the pipe then slows the process, instead of memory growing. The tasks end
with the watcher (cancelled before its ``on_stop``), which then owns the
cleanup. (They were a child actor until the actor runtime had owned tasks;
the child cost a cell, a mailbox and three more task steps per process to
stop, ~7 ms of the subagent benchmark's 100-child hard cancel.)

``detach()`` (a hand-off to a parent session, see ``handoff.py``) stops the
reading without losing anything: once both tasks have ended, a third casts
``Detached`` behind every chunk they queued, carrying the one read but not
yet queued, if any.

The wait task cancelled any other way than by a detach means the watcher is
stopping with the process still running: it calls ``on_abandoned`` at once
(the watcher signals the group then, so the process dies while the rest of
the watcher's teardown runs; its ``on_stop`` then mostly finds it gone). The
watcher signals only a leader it has not reaped, which still holds the group
id, so the signal cannot reach a group that reused it.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from actors import ActorContext, OwnedTask

from .handoff import Detached
from .messages import Exited, Output, OutputEnded


class OutputPump:
    """Feeds ``Output``/``OutputEnded``/``Exited`` to its watcher from two owned tasks."""

    def __init__(
        self, ctx: ActorContext, chunk: int, on_abandoned: Callable[[], None] | None = None
    ) -> None:
        self.ctx = ctx
        self.chunk = chunk
        self.on_abandoned = on_abandoned
        """Called when the wait is cancelled with the process running, not for a detach."""
        self.pending: bytes | None = None
        """A chunk read but not yet queued at the watcher."""
        self.detached = False
        self._tasks: tuple[OwnedTask, ...] = ()

    def start(self, process: trio.Process, stdout: trio.abc.ReceiveStream) -> None:
        """Start reading ``stdout`` and waiting for ``process``."""
        self._tasks = (
            self.ctx.start_task(lambda: self._read(stdout), name="read"),
            self.ctx.start_task(lambda: self._wait(process), name="wait"),
        )

    @property
    def done(self) -> bool:
        """Both the end of the output and the exit were delivered (or it never started)."""
        return all(task.done for task in self._tasks)

    def detach(self) -> bool:
        """Stop pumping; ``Detached`` follows. False if the pump already delivered the end."""
        if self.done or self.detached:
            return False
        self.detached = True
        self.stop()
        self.ctx.start_task(self._send_detached, name="detach")
        return True

    def stop(self) -> None:
        """Cancel both tasks (the watcher is done with the process, or hands it over)."""
        for task in self._tasks:
            task.cancel()

    async def _send_detached(self) -> None:
        for task in self._tasks:
            await task.wait()
        pending, self.pending = self.pending, None
        await self.ctx.self.cast(Detached(pending))

    async def _read(self, stdout: trio.abc.ReceiveStream) -> None:
        watcher = self.ctx.self
        try:
            while chunk := await stdout.receive_some(self.chunk):
                # A cast either queues the chunk or is cancelled before queueing it.
                self.pending = bytes(chunk)
                await watcher.cast(Output(self.pending))
                self.pending = None
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the pipe broke or was closed: that is the end of the output
        await watcher.cast(OutputEnded())

    async def _wait(self, process: trio.Process) -> None:
        try:
            returncode = await process.wait()
        except trio.Cancelled:
            if not self.detached and self.on_abandoned is not None:
                self.on_abandoned()
            raise
        await self.ctx.self.cast(Exited(returncode))
