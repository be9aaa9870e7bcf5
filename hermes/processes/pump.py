"""``Pump``: the watcher's child that reads the output pipe and waits for the exit.

A watcher must keep answering its mailbox (kill, stdin) while output flows, so
the blocking parts live in this child: one task reads the pipe in chunks of up
to 64 KiB (never by line, so output without newlines cannot stall it) and
casts each chunk to the watcher; another waits for the leader's exit status.
The watcher's mailbox is bounded with ``BLOCK``: a watcher that falls behind
slows the reader, and the pipe then slows the process, instead of memory
growing. The pump is spawned with a zero shutdown budget: stopping it cancels
both tasks at once (the watcher then owns the cleanup).

``detach()`` (a hand-off to a parent session, see ``handoff.py``) stops the
reading without losing anything: the pump then casts ``Detached`` behind every
chunk it queued, carrying the one it had read but not yet queued, if any.
"""

from __future__ import annotations

import attrs
import trio

from actors import Actor, ActorRef, MailboxConfig, Overflow

from .handoff import Detached
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
        self.pending: bytes | None = None
        """A chunk read but not yet queued at the watcher."""
        self.detached = False
        self._scope: trio.CancelScope | None = None
        self._done = False

    async def receive(self, message: object) -> None:
        if not isinstance(message, Run) or self._done:
            return
        if not self.detached:
            self._scope = scope = trio.CancelScope()
            with scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._read, message.stdout)
                    await self._wait(message.process)
            self._scope = None
        self._done = True
        if self.detached:
            pending, self.pending = self.pending, None
            await self.watcher.cast(Detached(pending))

    def detach(self) -> bool:
        """Stop pumping; ``Detached`` follows. False if the pump already delivered the end."""
        if self._done or self.detached:
            return False
        self.detached = True
        if self._scope is not None:
            self._scope.cancel()
        return True

    async def _read(self, stdout: trio.abc.ReceiveStream) -> None:
        try:
            while chunk := await stdout.receive_some(self.chunk):
                # A cast either queues the chunk or is cancelled before queueing it.
                self.pending = bytes(chunk)
                if not await self.watcher.cast(Output(self.pending)):
                    return  # the watcher is gone
                self.pending = None
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the pipe broke or was closed: that is the end of the output
        await self.watcher.cast(OutputEnded())

    async def _wait(self, process: trio.Process) -> None:
        returncode = await process.wait()
        await self.watcher.cast(Exited(returncode))
