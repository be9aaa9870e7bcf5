"""``WatcherBase``: what every watcher of a background process shares.

``ProcessWatcher`` (``watcher.py``: it started the process) and
``AdoptedWatcher`` (``adopted.py``: a process a previous daemon started) are
built on it: a ``ProcessError`` becomes the call's failure (or a log line for a
cast), the end of the process is told to the registry and checkpointed once,
kill requests wait for that end, and a stop fits its work into the time the
stop scope leaves. ``close_pipe`` closes a pipe end without costing a stop
loop passes.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import trio

from actors import Actor, MailboxConfig, Overflow, Reply
from hermes.procgroup import KillReport

from .checkpoint import Checkpoint
from .config import ProcessConfig
from .errors import ProcessError
from .messages import Finished
from .state import ProcessState, ProcessStatus

log = logging.getLogger(__name__)


class WatcherBase(Actor):
    """What every watcher shares: errors as replies, the end, kill waiters, the budget."""

    mailbox = MailboxConfig(capacity=64, overflow=Overflow.BLOCK)
    shutdown_budget = 6.0  # the registry passes ProcessConfig.stop_budget

    def __init__(
        self, state: ProcessState, config: ProcessConfig, checkpoint: Checkpoint | None
    ) -> None:
        self.state = state
        self.config = config
        self.checkpoint = checkpoint
        self.kill_requested = False
        self.finalized = False
        self.recorded = False
        """The start is in the store (so the finish must be too)."""
        self.handed_to: str | None = None
        """The session the process was handed to: this watcher owns it no more."""
        self._kill_waiters: list[Reply] = []

    async def receive(self, message: Any) -> Any:
        try:
            return await self.handle(message)
        except ProcessError as exc:
            if self.ctx.handling_call:
                self.ctx.defer_reply().fail(exc)
            else:
                log.warning("process %s: %s", self.state.id, exc)
            return None

    async def handle(self, message: Any) -> Any:
        raise NotImplementedError

    async def _complete(self, status: ProcessStatus, exit_code: int | None) -> None:
        """The process is over: answer kill waiters, tell the registry, record it, stop."""
        if self.finalized:
            return
        self.finalized = True
        self.state.finish(status, exit_code)
        self._answer_kills()  # first: a killer that saw the end turns off the notice
        parent = self.ctx.parent
        if parent is not None:
            await parent.cast(Finished(self.state.id))
        # Recorded before the watcher stops, after the waiters are told: a crash in
        # between leaves the row 'running', and recovery then marks it 'lost' (its pid
        # is dead), never kills anything.
        if self.checkpoint is not None and self.recorded:
            await self.checkpoint.finished(self.state)
        await self._stop_helpers()
        self.ctx.stop()

    async def _stop_helpers(self) -> None:
        """Cancel helper children quietly before stopping (a brutal stop logs a warning)."""

    def _await_kill(self) -> None:
        self._kill_waiters.append(self.ctx.defer_reply())

    def _answer_kills(self) -> None:
        info = self.state.info()
        waiters, self._kill_waiters = self._kill_waiters, []
        for reply in waiters:
            if reply.send(info) and info.finished:
                self.state.exit_seen = True  # the killer saw the end: no completion notice

    def _time_left(self) -> float:
        """Seconds left in the current (stop) scope; the stop budget if unbounded."""
        left = trio.current_effective_deadline() - trio.current_time()
        return self.config.stop_budget if math.isinf(left) else max(left, 0.0)

    async def _record_finish(self) -> None:
        """Checkpoint the finish as the watcher stops: queued, not waited for (the
        store logs a failure, as ``Checkpoint.finished`` would), unless the store
        cannot take it now; then within what the stop scope leaves."""
        if self.checkpoint is not None and self.recorded:
            timeout = min(self.config.store_timeout, self._time_left() - 0.05)
            if timeout > 0:
                await self.checkpoint.finished(self.state, timeout=timeout, wait=False)

    def _note_kill(self, report: KillReport | None) -> None:
        if report is not None and report.survivors:
            self.state.note(f"processes {list(report.survivors)} could not be killed")


async def close_pipe(stream: trio.abc.AsyncResource) -> None:
    """Close a pipe end; an fd stream at once, anything else shielded and bounded.

    ``FdStream.aclose`` is ``close()`` plus a checkpoint, so awaiting it costs each
    watcher two more loop passes during a mass cancel (100 of them in the subagents
    benchmark's cancel); closing an fd never blocks.
    """
    if isinstance(stream, trio.lowlevel.FdStream):
        stream.close()
        return
    with trio.move_on_after(1.0, shield=True):
        await stream.aclose()
