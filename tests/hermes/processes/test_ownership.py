"""Kill and ownership: whole groups die, SIGTERM-ignorers included; nothing survives a registry."""

from __future__ import annotations

import time
from pathlib import Path

import trio

from actors import open_system
from hermes.processes import ProcessConfig, ProcessService, ProcessStatus, spawn_process_registry
from hermes.procgroup import group_members
from hermes.store import StoreClient

from .helpers import ENV, FAST, Notices, StartRegistry, proc_exists, read_pids, ref_of, until

TREE = (
    # three levels, all ignoring SIGTERM (an ignored signal stays ignored across exec)
    "trap '' TERM; "
    "bash -c 'sleep 300 & echo $! >> {pids}; wait' & "
    "echo $! >> {pids}; echo $$ >> {pids}; wait"
)


async def start_tree(
    svc: ProcessService, tmp_path: Path, name: str = "pids"
) -> tuple[str, list[int]]:
    pids_file = tmp_path / name
    info = await svc.start(TREE.format(pids=pids_file), cwd=str(tmp_path), env=ENV)
    pids = await read_pids(pids_file, 3)
    await until(lambda: len(group_members(info.pgid)) >= 3)
    return info.id, pids


async def test_kill_sigterm_ignoring_tree_with_grandchildren(
    start_registry: StartRegistry, tmp_path: Path, notices: Notices
) -> None:
    svc = await start_registry(config=ProcessConfig())  # the real 1 s grace
    with trio.fail_after(10):
        process_id, pids = await start_tree(svc, tmp_path)
        began = time.monotonic()
        info = await svc.kill(process_id)
        took = time.monotonic() - began
    assert info.status is ProcessStatus.KILLED and info.exit_code == 128 + 9
    assert 1.0 <= took < 2.5  # SIGTERM ignored: the 1 s grace, then SIGKILL
    assert not any(proc_exists(pid) for pid in pids)  # gone, and no zombie either
    assert group_members(info.pgid) == []
    assert notices.items == []  # a kill the caller saw is no news


async def test_leftovers_of_an_exited_leader_are_killed(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start(
            f"sleep 300 & echo $! > {tmp_path / 'bg'}; echo leader done", cwd=str(tmp_path), env=ENV
        )
        result = await svc.wait(info.id, 5)
        (left,) = await read_pids(tmp_path / "bg", 1)
    assert result.info.status is ProcessStatus.EXITED and result.info.exit_code == 0
    assert result.info.note == "processes it left running in its group were stopped"
    assert not proc_exists(left) and group_members(info.pgid) == []


async def test_stopping_the_registry_kills_everything_it_owns(
    start_registry: StartRegistry, tmp_path: Path, store: StoreClient
) -> None:
    svc = await start_registry(store=store)
    with trio.fail_after(10):
        first, tree_a = await start_tree(svc, tmp_path, "a")
        second, tree_b = await start_tree(svc, tmp_path, "b")
        plain = await svc.start("sleep 300", cwd=str(tmp_path), env=ENV)
        began = time.monotonic()
        reason = await ref_of(svc).stop()
        took = time.monotonic() - began
    assert reason.kind.value == "shutdown"
    assert took < FAST.stop_budget  # all groups killed at once, within the budget
    for pid in [*tree_a, *tree_b, plain.pid]:
        assert not proc_exists(pid)
    rows = {row.id: row.status for row in await store.list_processes(session_id="s-1")}
    assert rows == {first: "killed", second: "killed", plain.id: "killed"}


async def test_a_hard_kill_of_the_registry_still_kills_the_groups(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry(config=ProcessConfig())
    with trio.fail_after(10):
        _, pids = await start_tree(svc, tmp_path)
        began = time.monotonic()
        await ref_of(svc).kill()  # the system's kill grace (1 s) bounds all cleanup
        took = time.monotonic() - began
    assert took < 1.5
    assert not any(proc_exists(pid) for pid in pids)


async def test_daemon_shutdown_leaves_no_process_behind(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with open_system("daemon", kill_grace=1.0) as system:
            services = [
                await spawn_process_registry(system, f"s-{i}", Notices(), config=FAST, name=f"p{i}")
                for i in range(2)
            ]
            trees = [await start_tree(svc, tmp_path, f"t{i}") for i, svc in enumerate(services)]
            began = time.monotonic()
        took = time.monotonic() - began
    assert took < FAST.stop_budget
    for _, pids in trees:
        assert not any(proc_exists(pid) for pid in pids)


async def test_concurrent_kills_and_a_kill_of_a_finished_process(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    count = 3
    svc = await start_registry()
    with trio.fail_after(10):
        info = await svc.start("sleep 300", cwd=str(tmp_path), env=ENV)
        results = []

        async def kill() -> None:
            results.append(await svc.kill(info.id))

        async with trio.open_nursery() as nursery:
            for _ in range(count):
                nursery.start_soon(kill)
        assert [r.status for r in results] == [ProcessStatus.KILLED] * count
        again = await svc.kill(info.id)  # finished: left alone, state returned
        assert again.status is ProcessStatus.KILLED and again.exit_code == 128 + 15
    assert not proc_exists(info.pid)
