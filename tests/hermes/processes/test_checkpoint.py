"""The crash checkpoint in a real SQLite store: records, adoption after a crash, recycled pids."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from actors import ActorSystem
from hermes.processes import (
    Liveness,
    ProcessStartFailed,
    ProcessStatus,
    StdinClosed,
    kill_orphans,
    list_orphans,
)
from hermes.processes.procfs import boot_id, self_fingerprint, start_time
from hermes.procgroup import group_members
from hermes.store import ProcessRecord, StoreClient, spawn_store

from .helpers import ENV, StartRegistry, proc_exists, read_pids, ref_of

REPO = Path(__file__).resolve().parents[3]
DEAD_OWNER = (4_000_000, 1)
"""A daemon pid/start time that no live process has."""

CRASHING_DAEMON = """
import os, sys, trio
from actors import open_system
from hermes.processes import spawn_process_registry
from hermes.store import spawn_store

async def main():
    async with open_system("crashing") as system:
        store = await spawn_store(system, sys.argv[1], register=None)
        svc = await spawn_process_registry(system, "s-crash", lambda notice: None, store=store)
        info = await svc.start(sys.argv[2], cwd="/", env={"PATH": os.environ["PATH"]})
        print(info.id, info.pid, flush=True)
        os._exit(7)  # a crash: no cleanup, no finish record

trio.run(main)
"""


def record(process_id: str, pid: int, started: int, **changes: object) -> ProcessRecord:
    fields: dict[str, object] = {
        "id": process_id,
        "session_id": "s-1",
        "command": "sleep 30",
        "cwd": "/",
        "pid": pid,
        "pgid": pid,
        "start_time": started,
        "boot_id": boot_id(),
        "owner_pid": DEAD_OWNER[0],
        "owner_start_time": DEAD_OWNER[1],
        "started_at": 1.0,
    }
    fields.update(changes)
    return ProcessRecord(**fields)  # type: ignore[arg-type]


async def until_recorded(store: StoreClient, process_id: str) -> None:
    with trio.fail_after(5):
        while True:
            rows = {r.id: r.status for r in await store.list_processes()}
            if rows.get(process_id, "running") != "running":
                return
            await trio.sleep(0.01)


def alive(process: trio.Process) -> bool:
    return process.poll() is None and Path(f"/proc/{process.pid}").exists()


async def test_every_start_and_finish_is_recorded(
    start_registry: StartRegistry, store: StoreClient, tmp_path: Path
) -> None:
    svc = await start_registry(store=store)
    with trio.fail_after(10):
        done = await svc.start("exit 4", cwd=str(tmp_path), env=ENV)
        await svc.wait(done.id, 5)
        running = await svc.start("sleep 300", cwd=str(tmp_path), env=ENV)
        (row,) = [r for r in await store.list_processes(session_id="s-1") if r.id == running.id]
        await svc.kill(running.id)
        # The finish is written right after the waiters are answered, before the watcher stops.
        await until_recorded(store, running.id)
        await until_recorded(store, done.id)
        rows = {r.id: r for r in await store.list_processes(session_id="s-1")}
    me = self_fingerprint()
    assert row.status == "running" and row.finished_at is None
    assert (row.pid, row.pgid, row.command) == (running.pid, running.pid, "sleep 300")
    assert row.start_time > 0 and row.boot_id == boot_id() and row.cwd == str(tmp_path)
    assert (row.owner_pid, row.owner_start_time) == (me.pid, me.start_time)
    assert (rows[done.id].status, rows[done.id].exit_code) == ("exited", 4)
    assert (rows[running.id].status, rows[running.id].exit_code) == ("killed", 128 + 15)
    assert rows[running.id].finished_at is not None


async def test_a_start_that_cannot_be_checkpointed_is_stopped(
    start_registry: StartRegistry, system: ActorSystem, tmp_path: Path
) -> None:
    store = await spawn_store(system, tmp_path / "gone", register=None, name="doomed")
    svc = await start_registry(store=store)
    await store.target.stop()  # type: ignore[attr-defined]  # an ActorRef
    marker = f"sleep 301.{os.getpid()}"
    with trio.fail_after(10), pytest.raises(ProcessStartFailed, match="could not be checkpointed"):
        await svc.start(marker, cwd=str(tmp_path), env=ENV)
    assert await svc.list() == []
    assert not any(marker in c for c in running_commands())  # what it had started is gone


def running_commands() -> list[str]:
    commands = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    commands.append(f.read().replace(b"\0", b" ").decode().strip())
            except OSError:
                continue
    return commands


async def test_after_a_daemon_crash_live_processes_are_adopted(
    start_registry: StartRegistry, system: ActorSystem, store_dir: Path, tmp_path: Path
) -> None:
    pids_file = tmp_path / "pids"
    command = f"trap '' TERM; sleep 300 & echo $$ $! > {pids_file}; wait"
    with trio.fail_after(15):
        crashed = await trio.run_process(
            [sys.executable, "-c", CRASHING_DAEMON, str(store_dir), command],
            capture_stdout=True,
            check=False,
            cwd=REPO,
        )
        assert crashed.returncode == 7
        process_id, _ = crashed.stdout.decode().split()
        leader, grandchild = await read_pids(pids_file, 2)
        assert proc_exists(leader) and proc_exists(grandchild)  # outlived their daemon
        store = await spawn_store(system, store_dir, register=None)
        svc = await start_registry(store=store, session_id="s-crash")
        (info,) = await svc.list()
        assert (info.id, info.pid, info.status) == (process_id, leader, ProcessStatus.RUNNING)
        assert info.adopted and not info.stdin_open
        (row,) = await store.list_processes(session_id="s-crash")
        assert row.owner_pid == os.getpid()  # claimed by this daemon
        with pytest.raises(StdinClosed, match="adopted"):
            await svc.write(process_id, "x")
        killed = await svc.kill(process_id)
    assert killed.status is ProcessStatus.KILLED
    assert not proc_exists(leader) and not proc_exists(grandchild)  # killed and reaped
    assert group_members(leader) == []
    (row,) = await store.list_processes(session_id="s-crash")
    assert row.status == "killed"


async def test_recycled_or_dead_pids_are_never_adopted_nor_killed(
    start_registry: StartRegistry, store: StoreClient, tmp_path: Path
) -> None:
    victim = await trio.lowlevel.open_process(["sleep", "30"], start_new_session=True)
    gone = await trio.lowlevel.open_process(["true"])
    await gone.wait()
    try:
        real = start_time(victim.pid)
        assert real is not None
        for row in (
            record("proc_recycled", victim.pid, real + 1),  # same pid, another start time
            record("proc_reboot", victim.pid, real, boot_id="another-boot"),
            record("proc_dead", gone.pid, 12345),
        ):
            await store.record_process_start(row)
        with trio.fail_after(10):
            svc = await start_registry(store=store)
            listed = {p.id: p for p in await svc.list()}
            await ref_of(svc).stop()  # stopping the registry must not touch them either
        assert {pid: p.status for pid, p in listed.items()} == dict.fromkeys(
            ("proc_recycled", "proc_reboot", "proc_dead"), ProcessStatus.LOST
        )
        assert all("after a daemon restart" in (p.note or "") for p in listed.values())
        assert alive(victim)  # never signalled
        rows = {r.id: r.status for r in await store.list_processes()}
        assert rows == dict.fromkeys(("proc_recycled", "proc_reboot", "proc_dead"), "lost")
    finally:
        victim.kill()
        await victim.wait()


async def test_processes_of_a_live_owner_are_left_alone(
    start_registry: StartRegistry, store: StoreClient
) -> None:
    daemon = await trio.lowlevel.open_process(["sleep", "30"])  # stands in for another daemon
    child = await trio.lowlevel.open_process(["sleep", "30"], start_new_session=True)
    try:
        owner, started = start_time(daemon.pid), start_time(child.pid)
        assert owner is not None and started is not None
        await store.record_process_start(
            record("proc_theirs", child.pid, started, owner_pid=daemon.pid, owner_start_time=owner)
        )
        with trio.fail_after(10):
            svc = await start_registry(store=store)
            assert await svc.list() == []
            await ref_of(svc).stop()
            assert await list_orphans(store) == []  # its owner lives: not an orphan
        (row,) = await store.list_processes()
        assert row.status == "running" and alive(child)
    finally:
        for process in (daemon, child):
            process.kill()
            await process.wait()


async def test_operator_lists_and_kills_orphans_across_sessions(store: StoreClient) -> None:
    # It says "ready" once TERM is ignored: a SIGTERM that came before the trap (a
    # busy machine) would end it without the SIGKILL this test is about.
    orphan = await trio.lowlevel.open_process(
        ["bash", "-c", "trap '' TERM; sleep 300 & echo ready; wait"],
        start_new_session=True,
        stdout=subprocess.PIPE,
    )
    bystander = await trio.lowlevel.open_process(["sleep", "30"], start_new_session=True)
    try:
        assert orphan.stdout is not None
        with trio.fail_after(30):
            assert await orphan.stdout.receive_some(16) == b"ready\n"
        started = start_time(orphan.pid)
        other = start_time(bystander.pid)
        assert started is not None and other is not None
        await store.record_process_start(record("proc_orphan", orphan.pid, started))
        await store.record_process_start(
            record("proc_wrong", bystander.pid, other - 5, session_id="s-2")
        )
        with trio.fail_after(10):
            found = {o.record.id: o.liveness for o in await list_orphans(store)}
            assert found == {"proc_orphan": Liveness.ALIVE, "proc_wrong": Liveness.RECYCLED}
            outcomes = {o.record.id: o for o in await kill_orphans(store, grace=0.2)}
            await orphan.wait()
        assert outcomes["proc_orphan"].action == "killed"
        report = outcomes["proc_orphan"].report
        assert report is not None and report.sigkill_sent and report.survivors == ()
        assert outcomes["proc_wrong"].action == "marked_lost"
        assert group_members(orphan.pid) == []
        assert alive(bystander)  # the recycled pid was never signalled
        rows = {r.id: r.status for r in await store.list_processes()}
        assert rows == {"proc_orphan": "killed", "proc_wrong": "lost"}
        assert await list_orphans(store) == []
    finally:
        for process in (orphan, bystander):
            if process.poll() is None:
                process.kill()
            await process.wait()
            if process.stdout is not None:
                await process.stdout.aclose()


async def test_restart_of_a_registry_over_the_same_store(
    start_registry: StartRegistry, store: StoreClient, tmp_path: Path
) -> None:
    with trio.fail_after(10):
        first = await start_registry(store=store)
        info = await first.start("sleep 300", cwd=str(tmp_path), env=ENV)
        await ref_of(first).stop()  # session closed: its processes die with it
        second = await start_registry(store=store)
        assert await second.list() == []  # nothing left to adopt
    assert not proc_exists(info.pid)
    (row,) = await store.list_processes()
    assert row.status == "killed"
