"""Registry limits: 64 processes, the oldest finished pruned first, finished kept 30 minutes."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import trio

from hermes.processes import ProcessNotFound, ProcessStatus, TooManyProcesses

from .helpers import ENV, FAST, StartRegistry, proc_exists, ref_of


async def test_sixty_four_running_refuse_a_sixty_fifth(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry()
    with trio.fail_after(15):
        infos = [await svc.start("sleep 300", cwd=str(tmp_path), env=ENV) for _ in range(64)]
        with pytest.raises(TooManyProcesses, match="64 background processes are running"):
            await svc.start("echo one too many", cwd=str(tmp_path), env=ENV)
        assert len(await svc.list()) == 64
        await svc.kill(infos[10].id)  # a finished one makes room: it is pruned
        extra = await svc.start("echo room", cwd=str(tmp_path), env=ENV)
        ids = [p.id for p in await svc.list()]
        assert infos[10].id not in ids and extra.id in ids and len(ids) == 64
        await ref_of(svc).stop()
    assert not any(proc_exists(info.pid) for info in infos)


async def test_the_oldest_finished_are_pruned_first(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry(config=attrs.evolve(FAST, max_processes=4))
    with trio.fail_after(10):
        running = await svc.start("sleep 300", cwd=str(tmp_path), env=ENV)
        done = []
        for i in range(3):
            info = await svc.start(f"echo {i}", cwd=str(tmp_path), env=ENV)
            await svc.wait(info.id, 5)
            done.append(info.id)
        newer = await svc.start("echo new", cwd=str(tmp_path), env=ENV)
        listed = {p.id: p.status for p in await svc.list()}
        assert done[0] not in listed  # the oldest finished went
        assert set(listed) == {running.id, done[1], done[2], newer.id}
        assert listed[running.id] is ProcessStatus.RUNNING
        with pytest.raises(ProcessNotFound):
            await svc.poll(done[0])
        await svc.kill(running.id)


async def test_finished_processes_expire_after_their_ttl(
    start_registry: StartRegistry, tmp_path: Path
) -> None:
    svc = await start_registry(config=attrs.evolve(FAST, finished_ttl=0.3, prune_interval=0.1))
    with trio.fail_after(10):
        info = await svc.start("echo bye", cwd=str(tmp_path), env=ENV)
        live = await svc.start("sleep 300", cwd=str(tmp_path), env=ENV)
        await svc.wait(info.id, 5)
        assert {p.id for p in await svc.list()} == {info.id, live.id}
        await trio.sleep(0.5)
        assert [p.id for p in await svc.list()] == [live.id]  # running ones never expire
        await svc.kill(live.id)
