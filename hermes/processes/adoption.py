"""Processes a registry takes over rather than starts: a checkpoint's after a daemon
restart, and a subagent's hand-off.

``recover`` reads the session's checkpoint (``checkpoint.py``): a process whose
leader still runs is adopted under an ``AdoptedWatcher``; one found dead (or its
pid reused) is marked lost; one owned by another live daemon is left alone.
``take_over`` is the parent's half of a hand-off (``handoff.py``): it takes the
ticket and starts a ``ProcessWatcher`` over the transfer, killing the process if
that fails. Both answer values; the registry records them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Container

import attrs
import trio

from actors import ActorContext, ActorRef, StartFailed
from hermes.procgroup import exit_status, kill_group
from hermes.store import ProcessRecord, StoreError

from .adopted import AdoptedWatcher
from .buffer import OutputBuffer
from .checkpoint import Checkpoint, leader_fingerprint
from .config import ProcessConfig
from .errors import ProcessError
from .handoff import Adopt
from .state import ProcessState, ProcessStatus
from .watcher import ProcessWatcher

log = logging.getLogger("hermes.processes.registry")


@attrs.frozen(slots=True)
class Recovered:
    """A process of the checkpoint: adopted (its watcher) or found lost (no watcher)."""

    state: ProcessState
    watcher: ActorRef | None = None


async def recover(
    ctx: ActorContext, session_id: str, checkpoint: Checkpoint, config: ProcessConfig
) -> list[Recovered]:
    """The session's checkpointed processes, the lost first; none if the store fails."""
    try:
        recovery = await checkpoint.recover()
    except StoreError as exc:
        log.warning(
            "process registry %s: could not recover session %s's processes: %s",
            ctx.path,
            session_id,
            exc,
        )
        return []
    for row in recovery.skipped:
        log.info("process %s: owned by live daemon pid %d; left alone", row.id, row.owner_pid)
    found: list[Recovered] = []
    for row in recovery.lost:
        state = state_of(row, config)
        state.finish(ProcessStatus.LOST, None)
        state.note("found dead (or its pid reused) after a daemon restart")
        found.append(Recovered(state))
    for row in recovery.adopt:
        state = state_of(row, config)
        watcher = AdoptedWatcher(state, leader_fingerprint(row), config, checkpoint)
        try:
            ref = await ctx.spawn(watcher, name=row.id, shutdown=config.stop_budget)
        except StartFailed as exc:
            log.error("process %s: could not adopt: %s", row.id, exc.reason.describe())
            continue
        found.append(Recovered(state, ref))
    return found


def state_of(row: ProcessRecord, config: ProcessConfig) -> ProcessState:
    """A checkpointed process's live state (its output before the restart is gone)."""
    age = max(0.0, time.time() - row.started_at)
    return ProcessState(
        id=row.id,
        session_id=row.session_id,
        command=row.command,
        cwd=row.cwd,
        buffer=OutputBuffer(config.buffer_chars),
        started_at=row.started_at,
        started_clock=trio.current_time() - age,
        pid=row.pid,
        pgid=row.pgid,
        start_time=row.start_time,
        stdin_open=False,
    )


async def take_over(
    ctx: ActorContext,
    message: Adopt,
    session_id: str,
    known: Container[str],
    config: ProcessConfig,
    checkpoint: Checkpoint | None,
) -> tuple[ProcessState, ActorRef, ProcessWatcher]:
    """Take a subagent's process into ``session_id`` under a new watcher.

    ``known``: the processes the registry has (a known id is refused before the
    take, so the child keeps it). From the take on the process is ours: if its
    watcher does not start, the process is killed and the error raised."""
    transfer = message.transfer
    state = transfer.state
    if state.id in known:
        raise ProcessError(f"Background process {state.id} is already in this session.")
    if not message.ticket.take():
        raise ProcessError(f"The hand-off of {state.id} was abandoned by its sender.")
    # Ours from here on: any failure below must kill it.
    state.session_id = session_id
    state.note(f"handed over by subagent session {transfer.from_session}")
    watcher = ProcessWatcher(state, transfer.spec, config, checkpoint, transfer=transfer)
    try:
        ref = await ctx.spawn(
            watcher,
            name=state.id,
            shutdown=config.stop_budget,
            start_timeout=config.store_timeout + 5.0,
        )
    except BaseException as exc:
        # A failed start ran the watcher's on_stop, which killed the group; make sure.
        with trio.CancelScope(shield=True), trio.move_on_after(config.stop_budget):
            if transfer.process.returncode is None:
                await kill_group(
                    transfer.process, grace=config.kill_grace, kill_wait=config.kill_wait
                )
        state.finish(ProcessStatus.KILLED, exit_status(transfer.process.returncode))
        if isinstance(exc, StartFailed):
            raise ProcessError(
                f"Background process {state.id} could not be taken over "
                f"({exc.reason.describe()}); it was stopped."
            ) from exc
        raise
    return state, ref, watcher
