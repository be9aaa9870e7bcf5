"""``TaskChild``: a one-shot task whose owner needs its value, however it ends.

The session's temporary children (the running turn, the background
reviewer) and the turn's (the compressor, each tool worker) are one-shot
tasks with one policy: restart type *temporary* (never restarted), shutdown
*brutal* (a stop kills at once; the task settles in a shielded step of its
own), and *unlinked* (a crash never takes the owner down). What the crash
does is the owner's to decide from the task's outcome: the turn is recorded
``failed``, the review ``failed``, the call gets an error result, the summary
falls back to the static one. A ``supervisors`` supervisor cannot be the
parent here (see "Tasks an owner waits on" in ``docs/architecture.md``): a
task it starts has no readable value, and a stop through it is a call to
another actor where the owner must kill its task within its own handler.

``TaskChild.start(ctx, task, name=...)`` spawns it and monitors it;
``outcome()`` waits for the exit and gives the value, or the ``ExitReason``
when there is none (crashed, killed, stopped); ``exited()`` does not wait
(None while it runs); ``stop()`` kills it first.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import trio

from actors import (
    ActorContext,
    Down,
    ExitReason,
    MonitorRef,
    Task,
    TaskCancelled,
    TaskFailed,
    TaskRef,
)

R = TypeVar("R")


class TaskChild(Generic[R]):
    """One running task of an owner: temporary, brutal shutdown, unlinked."""

    __slots__ = ("_ctx", "monitor", "ref")

    def __init__(self, ctx: ActorContext, ref: TaskRef[R], monitor: MonitorRef | None) -> None:
        self._ctx = ctx
        self.ref = ref
        self.monitor = monitor
        """Set when started with ``monitored``: the owner gets a ``Down`` when it exits."""

    @classmethod
    async def start(
        cls, ctx: ActorContext, task: Task[R], *, name: str, monitored: bool = False
    ) -> TaskChild[R]:
        """Spawn ``task`` as a child of the actor of ``ctx`` (its owner).

        ``monitored``: the owner is told of the exit by a ``Down`` (for a task it
        does not wait on in a handler, such as the turn: its mailbox stays free).
        """
        ref = await ctx.spawn_task(task, name=name, shutdown=0, link=False)
        return cls(ctx, ref, ctx.monitor(ref) if monitored else None)

    @property
    def path(self) -> str:
        return self.ref.path

    def is_down(self, down: Down) -> bool:
        """Whether ``down`` is this task's exit notice."""
        return self.monitor is not None and down.monitor == self.monitor

    def _unmonitor(self) -> None:
        if self.monitor is not None:
            self._ctx.demonitor(self.monitor, flush=True)
            self.monitor = None

    async def outcome(self) -> R | ExitReason:
        """Wait for the exit: the value, or the exit reason if it gave none."""
        self._unmonitor()
        try:
            return await self.ref.result()
        except (TaskFailed, TaskCancelled) as error:
            return error.reason

    async def exited(self) -> R | ExitReason | None:
        """As ``outcome``, without waiting: None while it still runs (reported unkillable)."""
        if self.ref.is_alive:
            self._unmonitor()
            return None
        return await self.outcome()

    async def stop(self) -> R | ExitReason | None:
        """Kill the task (shielded); its outcome, None if it outlived the kill grace.

        A task that had already returned keeps its value.
        """
        with trio.CancelScope(shield=True):
            await self.ref.kill()
            outcome = await self.exited()
        return outcome


def value_or_none(outcome: R | ExitReason | None) -> R | None:
    """The value of an outcome, None when the task gave none."""
    return None if outcome is None or isinstance(outcome, ExitReason) else outcome
