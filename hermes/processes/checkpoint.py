"""The crash checkpoint: every start and finish of a session's processes, in the store.

A start is recorded (pid, process group, start-time fingerprint, command,
session, owning daemon process) before ``start`` returns; if it cannot be
recorded the process is stopped and the start fails, so no background process
ever runs untracked. A finish is recorded when the watcher sees it; if that
write fails the row stays ``running`` and the next recovery marks it ``lost``
(the fingerprint check keeps that safe).

``recover`` runs when a registry starts: each row of its session still
``running`` is

- skipped if another daemon process that is alive owns it (never touch a
  live owner's processes);
- adopted (claimed for this daemon) if its pid is alive *and* its start time
  and boot match;
- otherwise marked ``lost``: it exited while nobody watched, or its pid now
  names another process, which is never signalled.
"""

from __future__ import annotations

import logging

import attrs

from hermes.store import ProcessRecord, ProcessRecordStatus, StoreClient, StoreError

from .errors import ProcessStartFailed
from .procfs import Fingerprint, Liveness, self_fingerprint
from .state import ProcessState, ProcessStatus

log = logging.getLogger(__name__)

_RECORD_STATUS: dict[ProcessStatus, ProcessRecordStatus] = {
    ProcessStatus.EXITED: "exited",
    ProcessStatus.KILLED: "killed",
    ProcessStatus.LOST: "lost",
}


def leader_fingerprint(record: ProcessRecord) -> Fingerprint:
    return Fingerprint(record.pid, record.start_time, record.boot_id)


def owner_alive(record: ProcessRecord) -> bool:
    """Is the daemon process that owns ``record`` still running (this one included)?"""
    owner = Fingerprint(record.owner_pid, record.owner_start_time, record.boot_id)
    return owner.check() is Liveness.ALIVE


@attrs.frozen(slots=True)
class Recovery:
    """What a registry found in the store at start."""

    adopt: tuple[ProcessRecord, ...] = ()
    lost: tuple[ProcessRecord, ...] = ()
    skipped: tuple[ProcessRecord, ...] = ()
    """Running under another live daemon process: left alone."""


class Checkpoint:
    """Writes one session's process rows; every call bounded by ``timeout``."""

    def __init__(
        self,
        store: StoreClient,
        session_id: str,
        *,
        timeout: float = 5.0,
        owner: Fingerprint | None = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.timeout = timeout
        self.owner = owner or self_fingerprint()

    async def started(self, state: ProcessState) -> None:
        """Record a start; ``ProcessStartFailed`` if the store did not take it."""
        record = ProcessRecord(
            id=state.id,
            session_id=state.session_id,
            command=state.command,
            cwd=state.cwd,
            pid=state.pid,
            pgid=state.pgid,
            start_time=state.start_time,
            boot_id=self.owner.boot_id,
            owner_pid=self.owner.pid,
            owner_start_time=self.owner.start_time,
            started_at=state.started_at,
        )
        try:
            await self.store.record_process_start(record, timeout=self.timeout)
        except StoreError as exc:
            raise ProcessStartFailed(
                f"the start of {state.command!r} could not be checkpointed ({exc}); "
                "the process was stopped"
            ) from exc

    async def moved(self, state: ProcessState) -> bool:
        """Record that ``state`` (handed over) now belongs to this session and daemon process.

        A failure is logged: the row keeps the old session, whose recovery would
        then adopt it (or the operator's orphan listing shows it).
        """
        try:
            await self.store.claim_process(
                state.id,
                self.owner.pid,
                self.owner.start_time,
                session_id=self.session_id,
                timeout=self.timeout,
            )
        except StoreError as exc:
            log.warning("process %s: its hand-over could not be checkpointed: %s", state.id, exc)
            return False
        return True

    async def finished(
        self, state: ProcessState, timeout: float | None = None, *, wait: bool = True
    ) -> bool:
        """Record a finish; a failure is logged (recovery will mark the row lost).

        ``wait=False`` (a watcher being stopped): queue the write and go on; the
        store logs it if it fails. It still waits if the write cannot be queued.
        """
        status = _RECORD_STATUS.get(state.status)
        if status is None:
            return False
        if not wait and self.store.submit_process_finish(state.id, status, state.exit_code):
            return True
        try:
            await self.store.record_process_finish(
                state.id,
                status,
                state.exit_code,
                timeout=self.timeout if timeout is None else timeout,
            )
        except StoreError as exc:
            log.warning("process %s: its finish could not be checkpointed: %s", state.id, exc)
            return False
        return True

    async def recover(self) -> Recovery:
        """Sort this session's unfinished rows into adopt / lost / skipped (see the module)."""
        rows = await self.store.list_processes(
            session_id=self.session_id,
            active_only=True,
            foreground=False,  # foreground commands' groups: ``foreground.sweep_leftovers``
            limit=10_000,
            timeout=self.timeout,
        )
        adopt: list[ProcessRecord] = []
        lost: list[ProcessRecord] = []
        skipped: list[ProcessRecord] = []
        for row in rows:
            mine = row.owner_pid == self.owner.pid and row.owner_start_time == self.owner.start_time
            if not mine and owner_alive(row):
                skipped.append(row)
                continue
            if leader_fingerprint(row).check() is Liveness.ALIVE:
                adopt.append(
                    await self.store.claim_process(
                        row.id, self.owner.pid, self.owner.start_time, timeout=self.timeout
                    )
                )
            else:
                lost.append(
                    await self.store.record_process_finish(row.id, "lost", timeout=self.timeout)
                )
        return Recovery(tuple(adopt), tuple(lost), tuple(skipped))
