"""The store's WAL checkpointer: passive checkpoints on a connection of their own.

Writes grow the WAL; once it holds ``CHECKPOINT_PAGES`` a passive checkpoint
copies it back into the database file so it can be reused. Under load one
takes 2-10 ms (it copies and fsyncs). Run by the store actor itself, every
request that arrived meanwhile waited behind it: a cancelled turn's last write
too, which made cancels slow exactly when the daemon was busy. So the store
hands the checkpoint to this child actor, which runs it in the worker thread
of its own connection (opened as it starts). A passive checkpoint neither
blocks nor waits for writers or readers (WAL mode), so the store goes on
serving meanwhile.

The mailbox holds one request: asks that arrive while one is queued are merged
into it (the sender gets ``MailboxFull`` and drops its ask). A failed
checkpoint is logged and the connection reopened for the next one; the WAL just
grows a little longer meanwhile. A checkpoint beside the writes never catches
up with a steady stream of them, though, and the WAL is only reused once one
has: past ``WAL_LIMIT_PAGES`` the store checkpoints with its writes paused.
Before each checkpoint the path is checked to still name the file the
connection has open, so a replaced database is never checkpointed through a
stale descriptor. (``checkpoint_passive`` reads the schema first: through a
connection that has not read the database yet, SQLite checkpoints nothing.)
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import cast

import apsw
import attrs
import trio

from actors import Actor, ExitReason, MailboxConfig, Overflow

from .database import (
    CLOSE_TIMEOUT,
    FileIdentity,
    checkpoint_passive,
    close_async,
    file_identity,
    open_async,
)
from .errors import describe_sqlite_error

log = logging.getLogger(__name__)

CHECKPOINT_TIMEOUT = 30.0
"""Seconds one checkpoint may take before it is abandoned (and retried next time)."""


@attrs.frozen(slots=True)
class Checkpoint:
    """Run a passive WAL checkpoint now (cast by the store)."""


class Checkpointer(Actor):
    """Checkpoints the WAL of the database at ``path`` when asked (see the module doc)."""

    mailbox = MailboxConfig(capacity=1, overflow=Overflow.FAIL)

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: apsw.AsyncConnection | None = None
        self._opened: FileIdentity | None = None

    async def on_start(self) -> None:
        # Open now, not at the first checkpoint: the daemon's threads and descriptors
        # are then fixed from its start (a soak watching them saw a late step).
        try:
            await self._connection()
        except apsw.Error as exc:  # the first checkpoint tries again
            log.warning("checkpointer for %s: %s", self.path, describe_sqlite_error(exc))

    async def receive(self, message: object) -> None:
        if not isinstance(message, Checkpoint):
            raise TypeError(f"the checkpointer runs Checkpoint messages, not {message!r}")
        self.ctx.beat("checkpoint")
        try:
            conn = await self._connection()
            if conn is None:
                return  # the file is gone: nothing to checkpoint
            with trio.move_on_after(CHECKPOINT_TIMEOUT) as scope:
                await conn.async_run(checkpoint_passive, cast(apsw.Connection, conn))
            if scope.cancelled_caught:
                log.warning("checkpoint of %s: over %gs, abandoned", self.path, CHECKPOINT_TIMEOUT)
                await self._close()
        except apsw.Error as exc:
            log.warning("checkpoint of %s failed: %s", self.path, describe_sqlite_error(exc))
            await self._close()

    async def _connection(self) -> apsw.AsyncConnection | None:
        """The open connection, reopened if the path now names another file."""
        current = file_identity(str(self.path))
        if self._conn is not None and current != self._opened:
            await self._close()
        if current is None:
            return None
        if self._conn is None:
            self._conn = await open_async(self.path)
            self._opened = current
        return self._conn

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with trio.move_on_after(CLOSE_TIMEOUT, shield=True):
                await close_async(conn, self.path)

    async def on_stop(self, reason: ExitReason) -> None:
        await self._close()
