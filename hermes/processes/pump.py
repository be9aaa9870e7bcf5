"""``Pump``: the watcher's child that reads the output pipe and waits for the exit.

A watcher must keep answering its mailbox (kill, stdin) while output flows, so
the blocking parts live in this child: one task reads the pipe in chunks of up
to 64 KiB (never by line, so output without newlines cannot stall it) and
casts each chunk to the watcher; another waits for the leader's exit status.
The watcher's mailbox is bounded with ``BLOCK``: a watcher that falls behind
slows the reader, and the pipe then slows the process, instead of memory
growing. The pump is spawned with a zero shutdown budget: stopping it cancels
both tasks at once (the watcher then owns the cleanup).
"""

from __future__ import annotations

import attrs
import trio

from actors import Actor, ActorRef, MailboxConfig, Overflow

from .messages import Exited, Output, OutputEnded


@attrs.frozen(slots=True)
class Run:
    """Start pumping: read ``stdout`` and wait for ``process``."""

    process: trio.Process
    stdout: trio.abc.ReceiveStream


class Pump(Actor):
    """Feeds ``Output``/``OutputEnded``/``Exited`` to ``watcher``; started with ``Run``."""

    mailbox = MailboxConfig(capacity=4, overflow=Overflow.FAIL)

    def __init__(self, watcher: ActorRef, chunk: int) -> None:
        self.watcher = watcher
        self.chunk = chunk

    async def receive(self, message: object) -> None:
        if isinstance(message, Run):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._read, message.stdout)
                await self._wait(message.process)

    async def _read(self, stdout: trio.abc.ReceiveStream) -> None:
        try:
            while chunk := await stdout.receive_some(self.chunk):
                if not await self.watcher.cast(Output(bytes(chunk))):
                    return  # the watcher is gone
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the pipe broke or was closed: that is the end of the output
        await self.watcher.cast(OutputEnded())

    async def _wait(self, process: trio.Process) -> None:
        returncode = await process.wait()
        await self.watcher.cast(Exited(returncode))
