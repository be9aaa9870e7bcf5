"""Foreground commands' process groups: recorded before they run, swept after a crash.

Real subprocesses, a real store, a real ``kill -9`` of a process running
``run_command`` (``test_a_crash_before_the_record_runs_nothing``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
import trio

from actors import ActorSystem
from hermes.processes import (
    ForegroundLedger,
    Liveness,
    describe_leftovers,
    kill_orphans,
    list_orphans,
    spawn_process_registry,
    sweep_leftovers,
)
from hermes.processes.procfs import Fingerprint, boot_id, reap_pid, self_fingerprint, start_time
from hermes.procgroup import EXIT_NOT_RELEASED, GroupLedger, live_members, run_command
from hermes.store import ProcessRecord, StoreClient
from hermes.tools import ToolContext
from hermes.tools.builtin.terminal import TerminalTool

from .helpers import ENV, FAST

DEAD_OWNER = (4_000_000, 1)
"""A daemon pid/start time that no live process has."""

READ_OWN_ROW = """
import sys, apsw
pid = int(sys.argv[2])
with open(f"/proc/{pid}/stat", "rb") as f:
    started = int(f.read().rsplit(b")", 1)[1].split()[19])
db = apsw.Connection(sys.argv[1], flags=apsw.SQLITE_OPEN_READONLY)
rows = db.execute(
    "SELECT tool_use_id, pgid, start_time FROM processes WHERE pid = ?", (pid,)
).fetchall()
print("ROW", rows, "PID", pid, "STARTED", started)
"""

CRASHING_TOOL = """
import os, sys, trio
from pathlib import Path
from hermes.procgroup import GroupSlot, run_command

class Stuck(GroupSlot):
    async def started(self, pid):
        print(pid, flush=True)
        await trio.sleep_forever()  # killed -9 here: after the spawn, before the record

    async def reaped(self):
        pass

async def main():
    await run_command(["bash", "-c", "touch " + sys.argv[1]], cwd=Path("/"),
                      env={"PATH": os.environ["PATH"]}, timeout=60, slot=Stuck())

trio.run(main)
"""


CRASHING_REGISTRY = """
import os, sys, trio
from actors import Actor, open_system
from hermes.processes import ProcessConfig, spawn_process_registry
from hermes.store import ListProcesses, RecordProcessStart, StoreClient

class SlowStore(Actor):
    async def receive(self, message):
        if isinstance(message, ListProcesses):
            return []  # nothing to recover
        if isinstance(message, RecordProcessStart):
            print(message.record.pid, flush=True)
            await trio.sleep_forever()  # killed -9 here: after the spawn, before the record
        raise AssertionError(message)

async def main():
    async with open_system("crashing") as system:
        store = StoreClient(await system.spawn(SlowStore(), name="store"), timeout=300)
        svc = await spawn_process_registry(system, "s-crash", lambda notice: None, store=store,
                                           config=ProcessConfig(store_timeout=300))
        await svc.start("touch " + sys.argv[1], cwd="/", env={"PATH": os.environ["PATH"]},
                        timeout=300)

trio.run(main)
"""


def leftover(row_id: str, pid: int, started: int, **changes: object) -> ProcessRecord:
    """A foreground group's row as a daemon that died would have left it."""
    fields: dict[str, object] = {
        "id": row_id,
        "session_id": "s-1",
        "command": "sleep 60; touch MARKER",
        "cwd": "/",
        "pid": pid,
        "pgid": pid,
        "start_time": started,
        "boot_id": boot_id(),
        "owner_pid": DEAD_OWNER[0],
        "owner_start_time": DEAD_OWNER[1],
        "started_at": 1.0,
        "tool_use_id": f"toolu_{row_id}",
    }
    fields.update(changes)
    return ProcessRecord(**fields)  # type: ignore[arg-type]


def group(command: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["bash", "-c", command], start_new_session=True)


def started_of(proc: subprocess.Popen[bytes]) -> int:
    started = start_time(proc.pid)
    assert started is not None
    return started


def stop(*procs: subprocess.Popen[bytes]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


async def statuses(store: StoreClient) -> dict[str, str]:
    return {r.id: r.status for r in await store.list_processes()}


# -- recorded before it runs -----------------------------------------------------------------


async def test_the_group_is_recorded_before_its_command_runs_and_forgotten_once_reaped(
    store: StoreClient, store_dir: Path
) -> None:
    ledger = ForegroundLedger(store, "s-1")
    command = f"{sys.executable} -c '{READ_OWN_ROW}' {store_dir / 'hermes.db'} $$"
    with trio.fail_after(60):
        result = await run_command(
            ["bash", "-c", command],
            cwd=Path("/"),
            env=ENV,
            timeout=50,
            slot=ledger.slot("toolu_1", command, "/"),
        )
        assert result.exit_code == 0, result.output
        # The command itself found its group's row: its own pid as the group, its start time.
        found = re.fullmatch(r"ROW (.*) PID (\d+) STARTED (\d+)\n", result.output)
        assert found is not None, result.output
        pid, started = int(found[2]), int(found[3])
        assert found[1] == repr([("toolu_1", pid, started)])
        assert await store.list_processes() == []  # dropped once reaped


@pytest.mark.parametrize("script", [CRASHING_TOOL, CRASHING_REGISTRY], ids=["fg", "bg"])
async def test_a_crash_before_the_record_runs_nothing(tmp_path: Path, script: str) -> None:
    """Foreground (``run_command``) and background (a watcher's checkpoint) alike."""
    marker = tmp_path / "MARKER"
    with trio.fail_after(60):
        tool = await trio.lowlevel.open_process(
            [sys.executable, "-c", script, str(marker)],
            stdout=subprocess.PIPE,
        )
        assert tool.stdout is not None
        line = b""
        while not line.endswith(b"\n"):
            line += await tool.stdout.receive_some(100)
        pid = int(line)
        assert Fingerprint.of(pid) is not None  # spawned, held by its gate
        tool.kill()  # kill -9 between the spawn and the record
        await tool.wait()
        await tool.stdout.aclose()
        # The gate sees its stdin close, exits without running the command, and comes
        # to us (this test process is a subreaper): the exit status says it never ran.
        code = None
        while code is None:
            code = reap_pid(pid)
            await trio.sleep(0.01)
    assert code == EXIT_NOT_RELEASED
    assert not marker.exists()


async def test_a_group_the_store_will_not_record_is_never_run(
    store: StoreClient, tmp_path: Path
) -> None:
    marker = tmp_path / "MARKER"
    ledger = ForegroundLedger(store, "")  # the store refuses a row without a session
    ctx = ToolContext.create(tmp_path, tmp_path / "spill", services={GroupLedger: ledger})
    ctx = ctx.for_call("toolu_1", "terminal")
    with trio.fail_after(60):
        outcome = await TerminalTool().run({"command": f"touch {marker}"}, ctx)
    assert outcome.is_error
    assert "could not be recorded" in outcome.content and "Nothing was run" in outcome.content
    assert not marker.exists()
    assert await store.list_processes() == []


# -- the sweep at start ----------------------------------------------------------------------


async def test_the_sweep_kills_leftovers_and_never_signals_a_recycled_pid(
    store: StoreClient, tmp_path: Path
) -> None:
    marker = tmp_path / "MARKER"
    left = group(f"sleep 60; touch {marker}")
    stubborn = group(f"trap '' TERM; sleep 60; touch {marker}")
    stranger = group("sleep 60")
    mine = group("sleep 60")
    try:
        me = self_fingerprint()
        rows = [
            leftover("fg_left", left.pid, started_of(left)),
            leftover("fg_stubborn", stubborn.pid, started_of(stubborn)),
            # Its pid now names another program: the start time does not match.
            leftover("fg_recycled", stranger.pid, started_of(stranger) + 12345),
            # A group of this (live) daemon: not a leftover.
            leftover(
                "fg_mine",
                mine.pid,
                started_of(mine),
                owner_pid=me.pid,
                owner_start_time=me.start_time,
            ),
        ]
        with trio.fail_after(60):
            for row in rows:
                await store.record_process_start(row)
            swept = await sweep_leftovers(store, FAST)
            assert {s.record.id: s.action for s in swept} == {
                "fg_left": "killed",
                "fg_stubborn": "killed",  # SIGTERM ignored: SIGKILL
                "fg_recycled": "lost",
            }
            # (The sweep reaped them: here they are this test's children.)
            assert not live_members(left.pid) and not live_members(stubborn.pid)
            assert stranger.poll() is None and mine.poll() is None  # never signalled
            assert await statuses(store) == {
                "fg_left": "killed",
                "fg_stubborn": "killed",
                "fg_recycled": "lost",
                "fg_mine": "running",
            }
            notes = await describe_leftovers(
                store, "s-1", ["toolu_fg_left", "toolu_fg_recycled", "toolu_fg_mine", "toolu_x"]
            )
            assert set(notes.texts) == {"toolu_fg_left", "toolu_fg_recycled"}
            assert f"process group {left.pid}" in notes.texts["toolu_fg_left"]
            assert "was killed" in notes.texts["toolu_fg_left"]
            assert "had ended" in notes.texts["toolu_fg_recycled"]
            await notes.forget(store)
            assert await statuses(store) == {"fg_stubborn": "killed", "fg_mine": "running"}
    finally:
        stop(left, stubborn, stranger, mine)
    assert not marker.exists()


async def test_with_list_the_sweep_leaves_them_running_and_listed(
    store: StoreClient, tmp_path: Path
) -> None:
    marker = tmp_path / "MARKER"
    left = group(f"sleep 60; touch {marker}")
    try:
        with trio.fail_after(60):
            await store.record_process_start(leftover("fg_left", left.pid, started_of(left)))
            config = attrs.evolve(FAST, leftover_commands="list")
            (swept,) = await sweep_leftovers(store, config)
            assert swept.action == "listed" and left.poll() is None
            (orphan,) = await list_orphans(store)
            assert orphan.record.id == "fg_left" and orphan.liveness is Liveness.ALIVE
            notes = await describe_leftovers(store, "s-1", ["toolu_fg_left"])
            text = notes.texts["toolu_fg_left"]
            assert "still running" in text and "hermes orphans --kill --process fg_left" in text
            assert notes.settled == ()  # still running: it stays listed
            (killed,) = await kill_orphans(store, grace=FAST.kill_grace)
            assert killed.action == "killed" and not live_members(left.pid)
            later = await describe_leftovers(store, "s-1", ["toolu_fg_left"])
            assert "was killed" in later.texts["toolu_fg_left"]
    finally:
        stop(left)
    assert not marker.exists()


async def test_a_sessions_registry_does_not_adopt_a_foreground_group(
    system: ActorSystem, store: StoreClient
) -> None:
    left = group("sleep 60")
    try:
        with trio.fail_after(60):
            await store.record_process_start(leftover("fg_left", left.pid, started_of(left)))
            service = await spawn_process_registry(
                system,
                "s-1",
                lambda notice: None,
                store=store,
                config=FAST,
                name="processes-fg",
            )
            assert await service.list() == []
            assert left.poll() is None
            assert await statuses(store) == {"fg_left": "running"}
    finally:
        stop(left)
