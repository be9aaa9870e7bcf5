"""Wait barriers: a judge's ``wait`` on a background process or a pid (seed #221).

The judge sees the session's running background processes (``background``)
and may answer ``wait`` with one of them (``wait_on_session``, its id) or with
a pid on this host (``wait_on_pid``). The goal then parks: no continuation, no
turn, until the barrier lifts. A ``BarrierWatch`` task (an unlinked child of
the session, like an evaluation) waits for it and returns what happened:

- a session's process: the registry's own wait (``ProcessService.wait``, no
  polling; the exit it reports is then the continuation's news, so no
  completion notice repeats it). Its watch-pattern notice is input that starts
  a turn of its own, and any counted turn's end drops the barrier and is judged;
- a pid: its pidfd, readable once it exits (a one-second look at ``/proc`` where
  there is none); a recycled pid counts as gone;
- either way at most ``WAIT_LIMIT`` seconds: a poller that never exits must not
  park the goal for ever.

A process that is not there or has already finished lifts it at once, so the
goal goes on as after ``continue`` (the judge named something this session
cannot watch).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
import trio

from actors import ActorContext, Down, MailboxConfig, Overflow, Task, TaskCancelled, TaskFailed
from hermes.processes import ProcessError, ProcessInfo, WaitOutcome
from hermes.processes.procfs import Fingerprint, Liveness

if TYPE_CHECKING:
    from actors import TaskRef
    from hermes.processes import ProcessService

WAIT_LIMIT = 1800.0
"""Longest a wait parks the goal before it is poked again (seconds)."""
PID_POLL = 1.0
"""Seconds between two looks at a pid where no pidfd can be opened."""
LISTED = 20
"""Running processes shown to the judge, newest first."""
TAIL = 1000
"""Characters of a finished process's output the continuation carries."""


@attrs.frozen(slots=True)
class Barrier:
    """What a parked goal waits on: a process of the session, or a pid."""

    process_id: str | None = None
    pid: int | None = None

    def describe(self) -> str:
        return f"background process {self.process_id}" if self.process_id else f"pid {self.pid}"


def background(infos: Sequence[ProcessInfo], now: float) -> str:
    """The judge's lines for the running processes: id, pid, command, age, trigger."""
    running = [i for i in infos if not i.finished][-LISTED:]
    lines = []
    for info in reversed(running):
        command = " ".join(info.command.split())
        short = command if len(command) <= 120 else command[:119] + "…"
        age = max(0.0, now - info.started_at)
        line = f"- {info.id} (pid {info.pid}): {short} (running {age:.0f}s)"
        if info.watch_patterns:
            line += f" | watch_patterns={list(info.watch_patterns)}"
        elif info.notify_on_complete:
            line += " | notify_on_complete"
        lines.append(line)
    return "\n".join(lines)


class BarrierWatch(Task[str]):
    """Wait until the barrier lifts; the value says how (the continuation's news)."""

    mailbox = MailboxConfig(capacity=4, overflow=Overflow.FAIL)
    shutdown_budget = 0.0

    def __init__(
        self, barrier: Barrier, processes: ProcessService | None, limit: float = WAIT_LIMIT
    ) -> None:
        self.barrier = barrier
        self.processes = processes
        self.limit = limit

    async def run(self) -> str:
        what = self.barrier.describe()
        with trio.move_on_after(self.limit):
            if self.barrier.process_id is not None:
                return await self._process(self.barrier.process_id)
            assert self.barrier.pid is not None
            return await _pid_exit(self.barrier.pid)
        return f"the wait on {what} reached its {self.limit:g} s limit (it still runs)"

    async def _process(self, process_id: str) -> str:
        if self.processes is None:
            return f"this session has no background processes to wait on ({process_id})"
        while True:
            try:
                result = await self.processes.wait(process_id, self.limit)
            except ProcessError as error:
                return f"the wait on {process_id} could not be kept: {error}"
            if result.outcome is WaitOutcome.FINISHED:
                info = result.info
                how = (
                    f"exited with code {info.exit_code}"
                    if info.status.value == "exited"
                    else (f"ended ({info.status.value})")
                )
                tail = result.tail[-TAIL:].rstrip("\n") or "(no output)"
                return (
                    f"background process {process_id} (`{info.command}`) {how} after "
                    f"{info.runtime:.0f}s. Last output:\n{tail}"
                )


async def _pid_exit(pid: int) -> str:
    """Return once ``pid`` has exited (or names another process now)."""
    fingerprint = Fingerprint.of(pid)
    if fingerprint is None or fingerprint.check() is not Liveness.ALIVE:
        return f"pid {pid} is not running on this host"
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        try:
            if fingerprint.check() is Liveness.ALIVE:  # the pid was not reused meanwhile
                await trio.lowlevel.wait_readable(fd)
        finally:
            os.close(fd)
    # No pidfd (an old kernel): only time can tell.
    while fingerprint.check() is Liveness.ALIVE:  # noqa: ASYNC110
        await trio.sleep(PID_POLL)
    return f"pid {pid} exited"


class BarrierSlot:
    """The keeper's one barrier: its watch task, and what it waits on."""

    def __init__(self, ctx: ActorContext, processes: ProcessService | None) -> None:
        self.ctx = ctx
        self.processes = processes
        self.barrier: Barrier | None = None
        self._ref: TaskRef[str] | None = None
        self._monitor: object | None = None

    async def park(self, barrier: Barrier, limit: float = WAIT_LIMIT) -> None:
        """Wait on ``barrier`` (a barrier already set is dropped)."""
        await self.stop()
        task = BarrierWatch(barrier, self.processes, limit)
        ref = await self.ctx.spawn_task(task, name="goal-barrier", shutdown=0, link=False)
        self._ref, self.barrier, self._monitor = ref, barrier, self.ctx.monitor(ref)

    def owns(self, down: Down) -> bool:
        return self._monitor is not None and down.monitor == self._monitor

    async def lifted(self) -> str:
        """How the ended watch says the barrier lifted; the slot is free again."""
        ref, barrier = self._ref, self.barrier
        assert ref is not None and barrier is not None
        self._ref = self.barrier = self._monitor = None
        try:
            return await ref.result()
        except (TaskFailed, TaskCancelled) as error:
            return f"the wait on {barrier.describe()} ended: {error.reason.describe()}"

    async def stop(self) -> None:
        ref, monitor = self._ref, self._monitor
        self._ref = self.barrier = self._monitor = None
        if ref is not None:
            if monitor is not None:
                self.ctx.demonitor(monitor, flush=True)  # type: ignore[arg-type]
            await ref.kill()
