"""Operator functions: background processes whose owning daemon is gone (across sessions).

An *orphan* is a row of the checkpoint still recorded as ``running`` whose
owning daemon process (pid and start time) is no longer alive. Its process
may still run (``Liveness.ALIVE``: killable), may have exited (``GONE``), or
its pid may now name another process (``RECYCLED``: never signalled).
Processes owned by a live daemon (this one included) are never listed.

``kill_orphans`` kills the live ones (fingerprint re-checked right before,
SIGTERM to the group, grace, SIGKILL, verified through ``/proc``) and marks
the rest ``lost``; every outcome is checkpointed.
"""

from __future__ import annotations

from collections.abc import Collection

import attrs
import trio

from hermes.procgroup import KillReport
from hermes.store import ProcessRecord, StoreClient

from .checkpoint import leader_fingerprint, owner_alive
from .procfs import Liveness, kill_adopted_group, reap_pid


@attrs.frozen(slots=True)
class Orphan:
    record: ProcessRecord
    liveness: Liveness

    @property
    def killable(self) -> bool:
        return self.liveness is Liveness.ALIVE


@attrs.frozen(slots=True)
class OrphanOutcome:
    record: ProcessRecord
    action: str
    """``killed``, ``marked_lost`` (it was gone or its pid recycled: nothing signalled)."""
    report: KillReport | None = None


async def list_orphans(store: StoreClient, *, timeout: float = 5.0) -> list[Orphan]:
    """Running rows whose owning daemon is dead, with the state of each process."""
    rows = await store.list_processes(active_only=True, limit=10_000, timeout=timeout)
    return [Orphan(row, leader_fingerprint(row).check()) for row in rows if not owner_alive(row)]


async def kill_orphans(
    store: StoreClient,
    process_ids: Collection[str] | None = None,
    *,
    grace: float = 1.0,
    kill_wait: float = 2.0,
    timeout: float = 5.0,
) -> list[OrphanOutcome]:
    """Kill the live orphans (all, or those in ``process_ids``); mark the others lost."""
    outcomes: list[OrphanOutcome] = []
    for orphan in await list_orphans(store, timeout=timeout):
        row = orphan.record
        if process_ids is not None and row.id not in process_ids:
            continue
        report = None
        if orphan.killable:
            # Shielded (a half-done kill leaves a half-dead group) and bounded.
            with trio.move_on_after(grace + kill_wait + 1.0, shield=True):
                report = await kill_adopted_group(
                    row.pgid, leader_fingerprint(row), grace=grace, kill_wait=kill_wait
                )
        if report is None:
            await store.record_process_finish(row.id, "lost", timeout=timeout)
            outcomes.append(OrphanOutcome(row, "marked_lost"))
        else:
            code = reap_pid(row.pid)
            await store.record_process_finish(row.id, "killed", code, timeout=timeout)
            outcomes.append(OrphanOutcome(row, "killed", report))
    return outcomes
