"""Handing a running process from a child session's registry to its parent's (issue item 7).

Two real registries on one store, real subprocesses, ``/proc`` for the truth:
the handed process survives the child registry's stop, is listed, pollable,
writable and killable in the parent's; the others die with the child; the
parent's stop kills it; a hand-off racing the child's end leaves exactly one
owner or a dead process, never an unowned live one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from actors import ActorRef, ActorSystem
from hermes.processes import (
    HandoffTarget,
    NoticeKind,
    ProcessConfig,
    ProcessError,
    ProcessInfo,
    ProcessNotRunning,
    ProcessService,
    ProcessServiceUnavailable,
    ProcessStatus,
    TooManyProcesses,
    spawn_process_registry,
)
from hermes.processes.handoff import Adopt
from hermes.procgroup import group_members
from hermes.store import StoreClient
from hermes.tools import ToolContext
from hermes.tools.builtin.process_tool import ProcessTool

from .helpers import ENV, FAST, Notices, StartRegistry, proc_exists, ref_of, until

ECHO = 'echo ready; while read line; do echo "got $line"; done'


async def pair(
    system: ActorSystem,
    start_registry: StartRegistry,
    store: StoreClient | None,
    *,
    parent_config: ProcessConfig = FAST,
) -> tuple[ProcessService, ProcessService, Notices, list[ProcessInfo]]:
    """(parent, child, the child's notices, what on_handed heard)."""
    parent = await start_registry(store=store, session_id="s-parent", config=parent_config)
    handed: list[ProcessInfo] = []
    child_notices = Notices()
    child = await spawn_process_registry(
        system,
        "s-child",
        child_notices,
        store=store,
        config=FAST,
        name="child-processes",
        handoff=HandoffTarget("s-parent", parent, handed.append),
    )
    return parent, child, child_notices, handed


def alive(pid: int) -> bool:
    """Running (a zombie does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


async def test_a_handed_process_keeps_running_with_its_output_and_stdin_in_the_parent(
    system: ActorSystem,
    start_registry: StartRegistry,
    store: StoreClient,
    notices: Notices,
    tmp_path: Path,
) -> None:
    parent, child, child_notices, handed = await pair(system, start_registry, store)
    with trio.fail_after(8):
        info = await child.start(ECHO, cwd=str(tmp_path), env=ENV, notify_on_complete=True)
        await _wait_output(child, info.id, "ready")
        await child.submit(info.id, "before")
        await _wait_output(child, info.id, "got before")

        moved = await child.handoff(info.id)
        assert moved.status is ProcessStatus.RUNNING and moved.session_id == "s-parent"
        assert [h.id for h in handed] == [info.id]
        assert notices.of(NoticeKind.HANDED_OVER)[0].process_id == info.id
        # the child no longer owns it, and says where it went
        with pytest.raises(ProcessError, match="handed over to session s-parent"):
            await _poll_when_forgotten(child, info.id)

        await ref_of(child).stop()  # the child ends: the handed process lives on
        assert alive(info.pid)
        listed = await parent.list()
        assert [i.id for i in listed] == [info.id]
        polled = await parent.poll(info.id)
        assert "got before" in polled.tail  # the output so far came along
        assert "handed over by subagent session s-child" in (polled.info.note or "")
        await parent.submit(info.id, "after")  # stdin moved too
        await _wait_output(parent, info.id, "got after")

        rows = await store.list_processes(session_id="s-parent", active_only=True)
        assert [r.id for r in rows] == [info.id]  # the checkpoint row moved

        killed = await parent.kill(info.id)
    assert killed.status is ProcessStatus.KILLED
    assert not proc_exists(info.pid) and group_members(info.pgid) == []
    with trio.fail_after(5):  # the finish is recorded right after the kill is answered
        while (await store.list_processes(session_id="s-parent"))[0].status != "killed":  # noqa: ASYNC110
            await trio.sleep(0.01)
    assert child_notices.items == []  # the child heard nothing about its end


async def test_processes_not_handed_over_die_with_the_child_and_the_parent_kills_the_rest(
    system: ActorSystem, start_registry: StartRegistry, store: StoreClient, tmp_path: Path
) -> None:
    parent, child, _, _ = await pair(system, start_registry, store)
    with trio.fail_after(8):
        kept = await child.start("sleep 301", cwd=str(tmp_path), env=ENV)
        dropped = await child.start("sleep 302 & wait", cwd=str(tmp_path), env=ENV)
        await until(lambda: len(group_members(dropped.pgid)) >= 2)
        members = group_members(dropped.pgid)
        await child.handoff(kept.id)
        await ref_of(child).stop()
        assert not any(proc_exists(pid) for pid in members)  # gone, no zombie
        assert alive(kept.pid)
        await ref_of(parent).stop()  # the parent session closes
    assert not proc_exists(kept.pid) and group_members(kept.pgid) == []


async def test_nothing_is_lost_when_output_flows_during_the_hand_off(
    system: ActorSystem, start_registry: StartRegistry, store: StoreClient, tmp_path: Path
) -> None:
    parent, child, _, _ = await pair(system, start_registry, store)
    count = 20_000
    command = (
        "python3 -c 'import sys, time\n"
        f"for i in range({count}):\n"
        "    print(i)\n"
        "    if i % 2000 == 0: sys.stdout.flush(); time.sleep(0.02)\n"
        'print("done", flush=True)\n'
        "time.sleep(300)'"
    )
    with trio.fail_after(8):
        info = await child.start(command, cwd=str(tmp_path), env=ENV)
        await _wait_output(child, info.id, "0")
        await child.handoff(info.id)
        await ref_of(child).stop()
        await _wait_output(parent, info.id, "done")
        page = (await parent.log(info.id, offset=0, limit=200_000)).page
        await parent.kill(info.id)
    assert page.text.split() == [*map(str, range(count)), "done"]


async def test_refusals_leave_the_process_where_it_was(
    system: ActorSystem, start_registry: StartRegistry, store: StoreClient, tmp_path: Path
) -> None:
    full = ProcessConfig(kill_grace=0.3, kill_wait=1.0, drain_timeout=0.3, max_processes=1)
    parent, child, _, handed = await pair(system, start_registry, store, parent_config=full)
    top = await start_registry(store=store, session_id="s-top")
    with trio.fail_after(8):
        mine = await top.start("sleep 303", cwd=str(tmp_path), env=ENV)
        with pytest.raises(ProcessError, match="no parent session"):
            await top.handoff(mine.id)

        done = await child.start("true", cwd=str(tmp_path), env=ENV)
        await child.wait(done.id, 5)
        with pytest.raises(ProcessNotRunning, match="nothing to hand over"):
            await child.handoff(done.id)

        busy = await parent.start("sleep 304", cwd=str(tmp_path), env=ENV)
        info = await child.start(ECHO, cwd=str(tmp_path), env=ENV)
        with pytest.raises(TooManyProcesses):
            await child.handoff(info.id)  # the parent is full: the child keeps it
        await child.submit(info.id, "still mine")  # and its pump was resumed
        await _wait_output(child, info.id, "got still mine")

        await parent.kill(busy.id)
        await ref_of(parent).stop()
        with pytest.raises(ProcessServiceUnavailable):
            await child.handoff(info.id)  # the parent's registry is gone
        await child.submit(info.id, "again")
        await _wait_output(child, info.id, "got again")
        assert handed == []
        await ref_of(child).stop()
        await ref_of(top).stop()
    assert not proc_exists(info.pid) and not proc_exists(mine.pid)


@pytest.mark.parametrize("delay", [0.0, 0.001, 0.005, 0.02])
async def test_a_hand_off_racing_the_childs_end_leaves_one_owner_or_a_dead_process(
    system: ActorSystem,
    start_registry: StartRegistry,
    store: StoreClient,
    tmp_path: Path,
    delay: float,
) -> None:
    parent, child, _, handed = await pair(system, start_registry, store)
    outcome: list[object] = []

    async def hand_off(process_id: str) -> None:
        try:
            outcome.append(await child.handoff(process_id))
        except ProcessError as exc:
            outcome.append(exc)

    async def end_child() -> None:
        await trio.sleep(delay)
        await ref_of(child).kill()  # a hard stop: the child's subtree is cancelled

    with trio.fail_after(8):
        info = await child.start("sleep 305", cwd=str(tmp_path), env=ENV)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(hand_off, info.id)
            nursery.start_soon(end_child)
        listed = {i.id: i for i in await parent.list()}
        if info.id in listed and not listed[info.id].finished:
            assert alive(info.pid) and [h.id for h in handed] == [info.id]
            await ref_of(parent).stop()
        else:
            await until(lambda: not proc_exists(info.pid))
    assert not proc_exists(info.pid) and group_members(info.pgid) == []


class Stalling:
    """The parent's real registry behind a gate: ``Adopt`` stalls before it is delivered
    (``before=True``) or after it was answered, until the caller is cancelled."""

    def __init__(self, registry: ActorRef, *, before: bool) -> None:
        self.registry = registry
        self.before = before
        self.stalled = trio.Event()

    async def call(self, message: object, timeout: float | None = None) -> object:
        if not isinstance(message, Adopt):
            return await self.registry.call(message, timeout=timeout)
        if not self.before:
            await self.registry.call(message, timeout=timeout)
        self.stalled.set()
        await trio.sleep_forever()


@pytest.mark.parametrize("taken", [False, True])
async def test_a_child_killed_in_the_middle_of_a_hand_off_leaves_exactly_one_owner(
    system: ActorSystem,
    start_registry: StartRegistry,
    store: StoreClient,
    tmp_path: Path,
    taken: bool,
) -> None:
    """Killed while the parent has not seen the hand-off: the child still owned the
    process, so it dies with the child. Killed after the parent took it (its answer
    not yet back): the parent owns it, and the child's end leaves it alone."""
    parent = await start_registry(store=store, session_id="s-parent")
    gate = Stalling(ref_of(parent), before=not taken)
    stalling = ProcessService(gate, config=FAST)
    child = await spawn_process_registry(
        system,
        "s-child",
        Notices(),
        store=store,
        config=FAST,
        name="child-processes",
        handoff=HandoffTarget("s-parent", stalling),
    )
    answers: list[object] = []

    async def hand_off(process_id: str) -> None:
        try:
            answers.append(await child.handoff(process_id))
        except ProcessError as exc:
            answers.append(exc)

    with trio.fail_after(8):
        info = await child.start("sleep 307", cwd=str(tmp_path), env=ENV)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(hand_off, info.id)
            await gate.stalled.wait()
            await ref_of(child).kill()
        (answer,) = answers
        listed = {i.id: i for i in await parent.list()}
        if taken:  # the caller hears the truth: it was handed over
            assert isinstance(answer, ProcessInfo) and answer.session_id == "s-parent"
            assert alive(info.pid)
            assert listed[info.id].status is ProcessStatus.RUNNING
            rows = await store.list_processes(session_id="s-parent", active_only=True)
            assert [r.id for r in rows] == [info.id]
            await parent.kill(info.id)
        else:
            assert isinstance(answer, ProcessNotRunning)
            assert "its session ended first" in str(answer)
            assert listed == {}
    assert not proc_exists(info.pid) and group_members(info.pgid) == []


async def test_the_process_tool_offers_handoff_only_to_subagents(
    system: ActorSystem, start_registry: StartRegistry, store: StoreClient, tmp_path: Path
) -> None:
    parent, child, _, _ = await pair(system, start_registry, store)
    plain, sub = ProcessTool(FAST), ProcessTool(FAST).for_subagent()
    assert "handoff" not in plain.input_schema["properties"]["action"]["enum"]
    assert "handoff" in sub.input_schema["properties"]["action"]["enum"]
    ctx = ToolContext.create(tmp_path, tmp_path / "spill", services={ProcessService: child})
    with trio.fail_after(8):
        info = await child.start("sleep 306", cwd=str(tmp_path), env=ENV)
        refused = await plain.run({"action": "handoff", "process_id": info.id}, ctx)
        assert refused.is_error and "Unknown action" in refused.content
        outcome = await sub.run({"action": "handoff", "process_id": info.id}, ctx)
        assert not outcome.is_error, outcome.content
        assert f"Handed {info.id} over" in outcome.content
        assert outcome.details["handed_over"] == info.id
        await ref_of(child).stop()
        assert alive(info.pid)
        await ref_of(parent).stop()
    assert not proc_exists(info.pid)


# -- helpers ------------------------------------------------------------------------------


async def _wait_output(service: ProcessService, process_id: str, text: str) -> None:
    with trio.fail_after(5):
        while text not in (await service.poll(process_id)).tail:  # noqa: ASYNC110 - polling
            await trio.sleep(0.01)


async def _poll_when_forgotten(service: ProcessService, process_id: str) -> None:
    """Poll until the registry has forgotten the process (its watcher's exit is handled)."""
    with trio.fail_after(5):
        while True:
            await service.poll(process_id)
            await trio.sleep(0.01)
