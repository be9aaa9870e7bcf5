"""``hermes orphans``: processes a dead daemon left behind, listed and killed through the daemon."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import trio

from actors import open_system
from hermes.processes.procfs import Fingerprint, boot_id
from hermes.store import ProcessRecord, spawn_store

from .daemon_proc import Daemon, daemon_env


def dead_pid() -> int:
    """The pid of a process that has exited (a daemon that died)."""
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def record(process_id: str, session: str, pid: int, start: int, owner: int) -> ProcessRecord:
    return ProcessRecord(
        id=process_id,
        session_id=session,
        command="sleep 60",
        cwd="/",
        pid=pid,
        pgid=pid,
        start_time=start,
        boot_id=boot_id(),
        owner_pid=owner,
        owner_start_time=1,
        started_at=time.time(),
    )


async def seed(data_dir: Path, rows: list[ProcessRecord]) -> None:
    """Checkpoint rows as a crashed daemon would have left them (before ours starts)."""
    async with open_system("seed") as system:
        store = await spawn_store(system, data_dir)
        info = await store.create_session(model="hermes-demo")
        for row in rows:
            await store.record_process_start(
                ProcessRecord(**{**_fields(row), "session_id": info.id})
            )


def _fields(row: ProcessRecord) -> dict[str, object]:
    return {name: getattr(row, name) for name in ProcessRecord.__slots__ if name != "__weakref__"}


def test_orphans_are_listed_and_killed_but_a_recycled_pid_is_never_signalled(
    tmp_path: Path,
) -> None:
    orphan = subprocess.Popen(["sleep", "60"], start_new_session=True)
    stranger = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        fingerprint = Fingerprint.of(orphan.pid)
        assert fingerprint is not None
        owner = dead_pid()
        daemon = Daemon(tmp_path, daemon_env(tmp_path))
        rows = [
            record("proc_orphan", "", orphan.pid, fingerprint.start_time, owner),
            # Its pid now names another program: the start time does not match.
            record("proc_recycled", "", stranger.pid, fingerprint.start_time + 12345, owner),
        ]
        trio.run(seed, daemon.paths.data_dir, rows)
        daemon.start()
        try:
            listed = daemon.cli("orphans", "--json")
            assert listed.returncode == 0, listed.stderr
            found = {row["id"]: row for row in json.loads(listed.stdout)}
            assert found["proc_orphan"]["liveness"] == "alive"
            assert found["proc_recycled"]["liveness"] != "alive"

            killed = daemon.cli("orphans", "--kill", "--json")
            assert killed.returncode == 0, killed.stderr
            actions = {row["id"]: row["action"] for row in json.loads(killed.stdout)}
            assert actions == {"proc_orphan": "killed", "proc_recycled": "marked_lost"}
            assert orphan.wait(timeout=5) != 0  # killed by a signal
            assert stranger.poll() is None  # never signalled

            again = daemon.cli("orphans")
            assert again.returncode == 0 and "no orphaned background processes" in again.stdout
        finally:
            daemon.kill()
    finally:
        for proc in (orphan, stranger):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
