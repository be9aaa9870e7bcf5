"""``AdoptedWatcher``: a process that outlived a daemon restart, taken over by a registry.

Only processes whose pid is alive with the recorded start time and boot are
adopted (``checkpoint.recover``). Their output pipe and stdin belonged to the
daemon that died, so an adopted process has no output and takes no input; the
watcher checks its liveness every ``adopted_poll`` seconds (reaping it, with
its exit status, if it was re-parented to us as subreaper), and kills its
group on request or when the registry stops, re-checking the fingerprint
first (``procfs.kill_adopted_group``).
"""

from __future__ import annotations

from typing import Any

from actors import ExitReason
from hermes.procgroup import reap_group

from .checkpoint import Checkpoint
from .config import ProcessConfig
from .errors import ProcessError, StdinClosed
from .handoff import HandOff
from .messages import CheckAlive, CloseStdin, Kill, Write
from .procfs import Fingerprint, Liveness, kill_adopted_group, reap_pid
from .state import ProcessInfo, ProcessState, ProcessStatus
from .watcher_base import WatcherBase


class AdoptedWatcher(WatcherBase):
    """Watches and owns an adopted process group (see the module docstring)."""

    def __init__(
        self,
        state: ProcessState,
        leader: Fingerprint,
        config: ProcessConfig,
        checkpoint: Checkpoint | None = None,
    ) -> None:
        super().__init__(state, config, checkpoint)
        self.leader = leader
        self.recorded = True  # its row exists: it was recovered from the store
        state.adopted = True
        state.stdin_open = False
        state.note("adopted after a daemon restart: its earlier output and its stdin were lost")

    async def on_start(self) -> None:
        self.ctx.send_interval(self.config.adopted_poll, CheckAlive())

    async def handle(self, message: Any) -> Any:
        match message:
            case CheckAlive():
                if self.leader.check() is not Liveness.ALIVE:
                    await self._complete(ProcessStatus.EXITED, self._reap())
            case Kill():
                return await self._kill()
            case HandOff():
                raise ProcessError(
                    f"Background process {self.state.id} was adopted after a daemon restart; "
                    "it cannot be handed over (kill it if it is no longer needed)."
                )
            case Write() | CloseStdin():
                raise StdinClosed(
                    f"Background process {self.state.id} was adopted after a daemon restart; "
                    "its stdin was lost."
                )
        return None

    def _reap(self) -> int | None:
        """Reap the leader and members if they are our children; the leader's exit status."""
        code = reap_pid(self.leader.pid)
        reap_group(self.state.pgid)
        return code

    async def _kill(self) -> ProcessInfo:
        if not self.finalized:
            self.kill_requested = True
            report = await kill_adopted_group(
                self.state.pgid,
                self.leader,
                grace=self.config.kill_grace,
                kill_wait=self.config.kill_wait,
            )
            self._note_kill(report)
            if report is None:
                self.state.note(
                    "it had exited and its pid names another process: nothing was signalled"
                )
                await self._complete(ProcessStatus.EXITED, None)
            else:
                await self._complete(ProcessStatus.KILLED, self._reap())
        return self.state.info()

    async def on_stop(self, reason: ExitReason) -> None:
        if not self.finalized:
            self.finalized = True
            left = self._time_left()
            report = await kill_adopted_group(
                self.state.pgid,
                self.leader,
                grace=min(self.config.kill_grace, left * 0.3),
                kill_wait=min(self.config.kill_wait, left * 0.3),
            )
            self._note_kill(report)
            status = ProcessStatus.EXITED if report is None else ProcessStatus.KILLED
            self.state.finish(status, self._reap())
            await self._record_finish()
        self._answer_kills()
