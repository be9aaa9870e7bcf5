"""Tasks an actor owns: concurrent work of the actor itself, without a mailbox.

An actor sometimes has to wait on several things at once that are not
messages: a pipe to read and a process to wait for, say. Before this, such
waits were a child actor of their own (a cell, a mailbox, a stop protocol)
that only cast what it saw back to its parent. An owned task is the lighter
form, the way an Erlang process owns a port: ``ctx.start_task(fn, name=...)``
runs ``fn()`` in the system's root nursery, as the actor (``current_cell`` is
the actor's, so what it sends comes from the actor), in a cancel scope the
actor holds.

- It ends with the actor: when the actor stops, its tasks are cancelled, at
  once, before its children are stopped and before ``on_stop``, and waited
  for within the actor's cleanup deadline (one that does not end by then is
  logged and left behind, as an unkillable child would be).
- A task that raises crashes the actor, with the task named in the exit
  reason: the task is the actor's own code, like its handlers.
- ``OwnedTask.cancel()`` cancels one early; ``await task.wait()`` waits for
  its end.
- Started with ``notify=True``, its end (returned or cancelled) reaches the
  actor as a ``TaskEnded`` notice, through the system lane like ``Down``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio

from ._current import current_cell
from ._exits import ExitReason
from ._teardown import State

if TYPE_CHECKING:
    from ._cell import ActorCell

log = logging.getLogger("actors")

TaskFunction = Callable[[], Awaitable[object]]


class OwnedTask:
    """One task an actor owns (see the module docstring)."""

    __slots__ = ("_ended", "_scope", "done", "name", "notify")

    def __init__(self, name: str, notify: bool = False) -> None:
        self.name = name
        self.notify = notify
        """Tell the actor (``TaskEnded``) when the task returns or is cancelled."""
        self.done = False
        """True once the task has ended, however it ended."""
        self._scope = trio.CancelScope()
        self._ended: trio.Event | None = None

    def cancel(self) -> None:
        """Cancel the task; it ends at its next checkpoint."""
        self._scope.cancel()

    async def wait(self) -> None:
        """Wait until the task has ended."""
        if self.done:
            await trio.lowlevel.checkpoint()
            return
        if self._ended is None:
            self._ended = trio.Event()
        await self._ended.wait()

    def _finish(self) -> None:
        self.done = True
        if self._ended is not None:
            self._ended.set()
            self._ended = None


async def run_owned(cell: ActorCell, task: OwnedTask, fn: TaskFunction) -> None:
    """Body of an owned task: ``fn()`` as the actor, a crash crashing the actor."""
    current_cell.set(cell)
    crashed = False
    try:
        with task._scope:
            await fn()
    except Exception as exc:
        crashed = True
        reason = ExitReason.from_caught(exc, where=f"{cell.path} in task {task.name}")
        if cell.state is State.RUNNING or cell.state is State.STARTING:
            cell.kill(reason)
        else:  # it failed while the actor was already stopping it: too late to crash it
            log.error("actor %s: %s", cell.path, reason.describe())
    finally:
        task._finish()
        cell.task_ended(task, crashed)
