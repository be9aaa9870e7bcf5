"""Foreground tool commands' process groups: recorded before they run, swept after a crash.

A ``terminal`` command in the foreground runs as a child of the turn; when the
daemon is killed (``kill -9``, OOM) nothing kills its group, and it runs on.
So every such group is recorded in the ``processes`` table (a row with the
``tool_use_id`` of its call) *before* its command runs: ``run_command`` starts
it held by a gate (``hermes.procgroup.gated``) and releases it only once
``ForegroundSlot.started`` has written the row. The row is deleted once the
group is reaped. What is left are the groups of a daemon that died.

On start the daemon sweeps them (``sweep_leftovers``), as configured by
``ProcessConfig.leftover_commands``:

- ``kill``: each group whose leader still matches its fingerprint (or whose
  leader is gone but members remain) is killed (SIGTERM, at most 0.5 s,
  SIGKILL, verified; all at once), the row marked ``killed``; a group already gone, or whose pid now
  names another process (never signalled), is marked ``lost``;
- ``list``: live groups are left running and stay listed by
  ``hermes orphans`` (which can kill them); gone ones are marked ``lost``.

The tool call itself got no result (the daemon died first). When its session
resumes, its history repair asks ``describe_leftovers`` what became of each
open call and says so in the synthetic result; rows it described as finished
are then forgotten.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterable, Mapping

import attrs
import trio

from hermes.procgroup import GroupLedger, GroupNotRecorded, GroupSlot, live_members
from hermes.store import ProcessRecord, StoreClient, StoreError

from .checkpoint import leader_fingerprint, owner_alive
from .config import ProcessConfig
from .procfs import Fingerprint, Liveness, kill_adopted_group, self_fingerprint, start_time

log = logging.getLogger(__name__)

SWEEP_GRACE = 0.5
"""Longest SIGTERM-to-SIGKILL wait of the start-up sweep."""
SWEEP_WAIT = 1.0
"""Longest wait after SIGKILL in the start-up sweep."""

FOREGROUND_PREFIX = "fg_"
"""Ids of foreground groups' rows (background processes' are ``proc_``)."""


class ForegroundLedger(GroupLedger):
    """One session's ledger of foreground process groups, in the store."""

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

    def slot(self, call_id: str, command: str, cwd: str) -> ForegroundSlot:
        return ForegroundSlot(self, call_id or "(no call id)", command, cwd)


class ForegroundSlot(GroupSlot):
    """One command's row: written before the command runs, deleted once its group is reaped."""

    def __init__(self, ledger: ForegroundLedger, call_id: str, command: str, cwd: str) -> None:
        self.ledger = ledger
        self.id = FOREGROUND_PREFIX + secrets.token_hex(6)
        self.call_id = call_id
        self.command = command
        self.cwd = cwd
        self._sent = False

    async def started(self, pid: int) -> None:
        ledger = self.ledger
        started = start_time(pid)  # readable: our child, not reaped yet
        if started is None:
            raise GroupNotRecorded(f"The process of {self.command!r} vanished before it ran")
        record = ProcessRecord(
            id=self.id,
            session_id=ledger.session_id,
            command=self.command,
            cwd=self.cwd,
            pid=pid,
            pgid=pid,
            start_time=started,
            boot_id=ledger.owner.boot_id,
            owner_pid=ledger.owner.pid,
            owner_start_time=ledger.owner.start_time,
            started_at=time.time(),
            tool_use_id=self.call_id,
        )
        self._sent = True
        try:
            await ledger.store.record_process_start(record, timeout=ledger.timeout)
        except StoreError as exc:
            raise GroupNotRecorded(
                f"The process group of {self.command!r} could not be recorded ({exc})"
            ) from exc

    async def reaped(self) -> None:
        if not self._sent:
            return
        store = self.ledger.store
        if store.submit_forget_process(self.id):
            return
        try:
            await store.forget_process(self.id, timeout=self.ledger.timeout)
        except StoreError as exc:  # the row stays; the next start marks it lost
            log.warning("foreground group %s: its record could not be dropped: %s", self.id, exc)


# -- the sweep at daemon start ---------------------------------------------------------------


@attrs.frozen(slots=True)
class Leftover:
    """A foreground group a dead daemon left, and what the sweep did with it."""

    record: ProcessRecord
    action: str
    """``killed``, ``listed`` (left running, as configured) or ``lost`` (gone, or its
    pid recycled: nothing signalled)."""


async def sweep_leftovers(store: StoreClient, config: ProcessConfig) -> list[Leftover]:
    """Kill or list every foreground group whose daemon is dead (see the module).

    Never raises a ``StoreError``: a failure is logged, and the rows it left are
    still listed by ``hermes orphans`` and swept again at the next start.
    """
    try:
        rows = await store.list_processes(
            active_only=True, foreground=True, limit=10_000, timeout=config.store_timeout
        )
    except StoreError as exc:
        log.warning("foreground groups left by a dead daemon could not be listed: %s", exc)
        return []
    found = [row for row in rows if not owner_alive(row)]
    done: list[Leftover] = []

    async def settle(row: ProcessRecord) -> None:
        try:
            done.append(await _settle(store, row, config))
        except StoreError as exc:  # the row stays running: listed, and swept again next time
            log.warning("foreground group %s: its sweep could not be recorded: %s", row.id, exc)

    async with trio.open_nursery() as nursery:
        for row in found:
            nursery.start_soon(settle, row)
    for item in done:
        row = item.record
        log.warning(
            "foreground command %r (session %s, tool call %s, pid %d) outlived the daemon "
            "that ran it: %s",
            row.command,
            row.session_id,
            row.tool_use_id,
            row.pid,
            item.action,
        )
    return done


def _running(row: ProcessRecord) -> bool:
    """The group still has live members, and its number still names it."""
    return leader_fingerprint(row).check() is not Liveness.RECYCLED and bool(live_members(row.pgid))


async def _settle(store: StoreClient, row: ProcessRecord, config: ProcessConfig) -> Leftover:
    timeout = config.store_timeout
    if not _running(row):
        return Leftover(await store.record_process_finish(row.id, "lost", timeout=timeout), "lost")
    if config.leftover_commands == "list":
        return Leftover(row, "listed")
    # Shorter than a watcher's ladder: the sweep runs inside the sessions manager's start,
    # which its supervisor bounds (5 s); all groups are killed at once.
    grace, wait = min(config.kill_grace, SWEEP_GRACE), min(config.kill_wait, SWEEP_WAIT)
    report = None
    with trio.move_on_after(grace + wait + 0.5, shield=True):  # a half-done kill is worse
        report = await kill_adopted_group(
            row.pgid, leader_fingerprint(row), grace=grace, kill_wait=wait
        )
    if report is None:  # its pid was recycled meanwhile (or the kill ran out of time)
        if not _running(row):
            return Leftover(
                await store.record_process_finish(row.id, "lost", timeout=timeout), "lost"
            )
        return Leftover(row, "listed")
    if report.survivors:
        log.warning("foreground group %s: %s survived SIGKILL", row.id, list(report.survivors))
    return Leftover(await store.record_process_finish(row.id, "killed", timeout=timeout), "killed")


# -- the history repair of a resumed session -----------------------------------------------


@attrs.frozen(slots=True)
class LeftoverNotes:
    """What became of a resumed session's unanswered foreground commands."""

    texts: Mapping[str, str] = attrs.field(factory=dict)
    """Tool use id -> why it has no result, and what happened to its group."""
    settled: tuple[str, ...] = ()
    """Rows that are finished and now described: to forget once the repair is stored."""

    async def forget(self, store: StoreClient, timeout: float = 5.0) -> None:
        """Drop the described finished rows (a failure is logged: they are harmless)."""
        for row_id in self.settled:
            try:
                await store.forget_process(row_id, timeout=timeout)
            except StoreError as exc:
                log.warning("foreground group %s: its record could not be dropped: %s", row_id, exc)


async def describe_leftovers(
    store: StoreClient, session_id: str, tool_use_ids: Iterable[str], *, timeout: float = 5.0
) -> LeftoverNotes:
    """For each of ``tool_use_ids`` whose group a dead daemon left: what became of it.

    Calls with no such row get no text (the generic one applies). A store
    failure is logged and gives no texts: the repair must not fail the session.
    """
    wanted = set(tool_use_ids)
    if not wanted:
        return LeftoverNotes()
    try:
        rows = await store.list_processes(
            session_id=session_id, foreground=True, limit=10_000, timeout=timeout
        )
    except StoreError as exc:
        log.warning("session %s: foreground groups unknown (%s)", session_id, exc)
        return LeftoverNotes()
    latest: dict[str, ProcessRecord] = {}
    for row in rows:  # oldest first: the last one of a call id wins
        if row.tool_use_id in wanted:
            latest[row.tool_use_id] = row
    texts: dict[str, str] = {}
    settled: list[str] = []
    for call_id, row in latest.items():
        text = describe(row)
        if text is not None:
            texts[call_id] = text
            if not row.active:
                settled.append(row.id)
    return LeftoverNotes(texts, tuple(settled))


def describe(row: ProcessRecord) -> str | None:
    """Why a foreground call has no result, from its group's row (None: not known)."""
    head = (
        f"the daemon stopped while this command ran (`{_clip(row.command)}`, "
        f"process group {row.pgid})"
    )
    if row.status == "killed":
        return (
            f"{head}. The group was still running after the restart and was killed: "
            "its output is lost, and it may have partly completed"
        )
    if row.status in ("lost", "exited"):
        return (
            f"{head}. The group had ended by the restart: its output and exit status "
            "are lost, and it may or may not have completed"
        )
    if owner_alive(row):
        return None  # this daemon's own group (a session restart): its turn cleans it up
    if _running(row):
        return (
            f"{head}. The group is still running, left alone as configured "
            '(processes.leftover_commands = "list"): `hermes orphans` lists it as '
            f"{row.id}, and `hermes orphans --kill --process {row.id}` stops it. "
            "Its output is not captured"
        )
    return (
        f"{head}. The group ended after the restart, unwatched: its output and exit "
        "status are lost, and it may or may not have completed"
    )


def _clip(command: str, limit: int = 200) -> str:
    line = " ".join(command.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
