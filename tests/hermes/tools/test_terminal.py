"""The terminal tool with real bash processes on the real clock."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from hermes.bell import Bell
from hermes.procgroup import group_members
from hermes.tools import (
    ApprovalChoice,
    ApprovalRequest,
    BatchCollector,
    BatchPolicy,
    CallStatus,
    ToolCall,
    ToolContext,
    ToolOutcome,
    ToolRegistry,
    run_batch,
)


async def terminal(registry: ToolRegistry, ctx: ToolContext, **args: Any) -> ToolOutcome:
    return await registry.call(ToolCall("t1", "terminal", args), ctx)


def read_pids(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()] if path.exists() else []


async def wait_for_pids(path: Path, count: int) -> list[int]:
    """Poll until ``path`` holds ``count`` pids (the command writes them)."""
    for _ in range(500):
        if len(pids := read_pids(path)) >= count:
            return pids
        await trio.sleep(0.01)
    raise AssertionError(f"{path} never held {count} pids")


def gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


def our_zombies() -> list[int]:
    zombies = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields[0] == b"Z" and int(fields[1]) == os.getpid():
            zombies.append(int(entry))
    return zombies


async def test_output_and_exit_code(registry: ToolRegistry, ctx: ToolContext) -> None:
    with trio.fail_after(10):
        ok = await terminal(registry, ctx, command="echo hello; echo oops >&2")
        failed = await terminal(registry, ctx, command="echo partial; exit 3")
    assert ok.content == "hello\noops\n[exit code: 0]" and not ok.is_error
    assert ok.details["exit_code"] == 0
    assert failed.is_error and failed.content == "partial\n[exit code: 3]"
    assert failed.details["exit_code"] == 3


async def test_stdin_is_empty_and_ansi_is_stripped(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    with trio.fail_after(10):
        cat = await terminal(registry, ctx, command="cat")
        colour = await terminal(registry, ctx, command="printf '\\033[31mred\\033[0m\\n'")
    assert cat.content == "(no output)\n[exit code: 0]"
    assert colour.content == "red\n[exit code: 0]"


async def test_timeout_gives_exit_124(registry: ToolRegistry, ctx: ToolContext) -> None:
    with trio.fail_after(10):
        start = time.monotonic()
        outcome = await terminal(registry, ctx, command="echo started; sleep 30", timeout="1")
        elapsed = time.monotonic() - start
    assert 0.9 <= elapsed < 3.0
    assert outcome.is_error
    assert outcome.content == "started\n[Command timed out after 1s]\n[exit code: 124]"
    assert outcome.details["exit_code"] == 124 and outcome.details["timed_out"]


async def test_over_the_foreground_limit_without_a_process_service_runs_nothing(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    """Over the cap the command goes to the background; with no process service, nowhere."""
    outcome = await terminal(registry, ctx, command="touch ran.txt", timeout=601)
    assert outcome.is_error and outcome.details["promoted"] == "timeout"
    assert "Background mode is not available" in outcome.content
    assert "timeout=601 s is over the foreground limit of 600 s" in outcome.content
    assert "Nothing was run" in outcome.content
    assert not (workdir / "ran.txt").exists()


async def test_cancel_kills_the_whole_group_and_reaps_it(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    """``bash -c 'sleep 300 & sleep 300'`` cancelled mid-batch: nothing of it survives."""
    calls = [
        ToolCall("c0", "terminal", {"command": "sleep 300 & echo $$ $! > pids; sleep 300"}),
        ToolCall("c1", "read_file", {"path": "pids"}),
    ]
    collector = BatchCollector(calls)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            cancel = trio.CancelScope()

            async def batch() -> None:
                with cancel:
                    await run_batch(calls, registry, ctx, collector=collector)

            nursery.start_soon(batch)
            leader, grandchild = await wait_for_pids(workdir / "pids", 2)
            assert group_members(leader), "the command should be running"
            start = time.monotonic()
            cancel.cancel()
        elapsed = time.monotonic() - start
    assert cancel.cancelled_caught
    assert elapsed < 2.5  # SIGTERM is enough for sleep; well inside grace + SIGKILL
    assert group_members(leader) == []  # no member at all: none alive, no zombie
    assert gone(leader) and gone(grandchild)
    assert our_zombies() == []
    results = collector.results()
    assert [r.status for r in results] == [CallStatus.CANCELLED, CallStatus.SKIPPED]


async def test_a_command_printing_5mb_without_newlines_finishes(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    with trio.fail_after(20):
        outcome = await terminal(
            registry, ctx, command="head -c 5000000 /dev/zero | tr '\\0' x; echo; echo END"
        )
    assert not outcome.is_error
    assert "bytes of output omitted" in outcome.content
    assert outcome.content.endswith("END\n[exit code: 0]")
    assert len(outcome.content) < 250_000
    assert outcome.details["output_bytes"] == 5_000_005


async def test_secrets_are_not_visible_to_children(
    registry: ToolRegistry, workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_token")
    monkeypatch.setenv("HERMES_TEST_VISIBLE", "plain-value")
    ctx = ToolContext.create(workdir, tmp_path / "spill")
    with trio.fail_after(10):
        outcome = await terminal(registry, ctx, command="env")
    assert "HERMES_TEST_VISIBLE=plain-value" in outcome.content
    assert "PATH=" in outcome.content
    assert "sk-ant-very-secret" not in outcome.content
    assert "ANTHROPIC_API_KEY" not in outcome.content
    assert "ghp_secret_token" not in outcome.content


async def test_workdir(registry: ToolRegistry, ctx: ToolContext, workdir: Path) -> None:
    (workdir / "sub").mkdir()
    with trio.fail_after(10):
        here = await terminal(registry, ctx, command="pwd")
        sub = await terminal(registry, ctx, command="pwd", workdir="sub")
        missing = await terminal(registry, ctx, command="touch x", workdir="nope")
    assert here.content.splitlines()[0] == str(workdir)
    assert sub.content.splitlines()[0] == str(workdir / "sub")
    assert missing.is_error and "not a directory" in missing.content
    assert not (workdir / "nope").exists()


async def test_interrupt_gives_exit_130(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    interrupt = Bell()
    interruptible = attrs.evolve(ctx, interrupt=interrupt)

    async def interrupt_soon() -> None:
        await wait_for_pids(workdir / "pid", 1)
        interrupt.set()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(interrupt_soon)
            start = time.monotonic()
            outcome = await terminal(
                registry, interruptible, command="echo before; echo $$ > pid; sleep 30"
            )
            elapsed = time.monotonic() - start
    assert elapsed < 3
    assert outcome.content == "before\n[Command interrupted]\n[exit code: 130]"
    assert outcome.details["interrupted"]
    leader = int((workdir / "pid").read_text())
    assert group_members(leader) == []


async def test_background_leftovers_are_stopped(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    with trio.fail_after(10):
        start = time.monotonic()
        outcome = await terminal(registry, ctx, command="sleep 300 & echo $! > pid; echo done")
        elapsed = time.monotonic() - start
    assert elapsed < 3
    assert outcome.content.startswith("done\n")
    assert "left running in the background were stopped" in outcome.content
    assert gone(int((workdir / "pid").read_text()))


async def test_the_tool_deadline_covers_its_own_timeout(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    """A short batch default does not cut a terminal command inside its own timeout."""
    calls = [ToolCall("c0", "terminal", {"command": "sleep 0.6; echo ok", "timeout": 5})]
    with trio.fail_after(10):
        results = await run_batch(calls, registry, ctx, policy=BatchPolicy(call_timeout=0.2))
    assert results[0].status is CallStatus.OK
    assert results[0].outcome.content == "ok\n[exit code: 0]"


async def test_hardline_commands_never_run(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    ctx.approvals.yolo = True  # yolo skips the dangerous list, never the floor
    outcome = await terminal(registry, ctx, command="touch ran.txt && sudo rm -rf /")
    assert outcome.is_error and outcome.content.startswith("BLOCKED")
    assert "Nothing was executed" in outcome.content
    assert outcome.details == {"ran": False, "verdict": "hardline"}
    assert not (workdir / "ran.txt").exists()


async def test_dangerous_commands_unattended_are_denied(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "build").mkdir()
    outcome = await terminal(registry, ctx, command="touch ran.txt && rm -rf ./build")
    assert outcome.is_error and "Command NOT run" in outcome.content
    assert "unattended" in outcome.content
    assert not (workdir / "ran.txt").exists() and (workdir / "build").exists()


async def test_dangerous_commands_run_once_approved(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalChoice:
        asked.append(request)
        return ApprovalChoice.ONCE

    (workdir / "build").mkdir()
    attended = attrs.evolve(ctx, ask_approval=person)
    with trio.fail_after(10):
        outcome = await terminal(registry, attended, command="rm -rf ./build && echo removed")
    assert outcome.content == "removed\n[exit code: 0]"
    assert outcome.details["approval"] == "approved_once"
    assert not (workdir / "build").exists()
    assert [r.command for r in asked] == ["rm -rf ./build && echo removed"]
    assert asked[0].call_id == "t1"
