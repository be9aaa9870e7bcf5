"""The ``process`` tool and ``terminal``'s background modes, through the tool registry."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.bell import Bell
from hermes.processes import NoticeKind, ProcessService, ProcessStatus
from hermes.procgroup import group_members
from hermes.tools import ToolCall, ToolContext, ToolOutcome, builtin_tools, default_registry
from hermes.tools.builtin.process_tool import ProcessTool

from .helpers import ENV, Notices, StartRegistry, proc_exists


@pytest.fixture
async def service(start_registry: StartRegistry) -> ProcessService:
    return await start_registry()


@pytest.fixture
def ctx(tmp_path: Path, service: ProcessService) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext.create(
        work,
        tmp_path / "spill",
        environ=ENV,
        services={ProcessService: service},
        interrupt=Bell(),
    )


async def call(ctx: ToolContext, tool: str, **args: Any) -> ToolOutcome:
    with trio.fail_after(15):
        return await default_registry().call(ToolCall("call-1", tool, args), ctx)


def process_id_in(text: str) -> str:
    found = re.search(r"proc_[0-9a-f]{12}", text)
    assert found is not None, text
    return found.group(0)


def test_default_registry_offers_the_process_tool() -> None:
    assert default_registry().names()[-1] == "process"
    assert "process" not in [t.name for t in builtin_tools()]
    assert "process" not in default_registry(processes=False).names()
    spec = ProcessTool().spec()
    assert spec.input_schema["properties"]["action"]["enum"] == [
        "list", "poll", "log", "wait", "kill", "write", "submit", "close"
    ]  # fmt: skip


async def test_terminal_background_returns_an_id_at_once(ctx: ToolContext) -> None:
    began = time.monotonic()
    started = await call(ctx, "terminal", command="echo hi; sleep 0.5; echo bye", background=True)
    assert time.monotonic() - began < 0.4
    assert not started.is_error and started.details["background"] is True
    process_id = process_id_in(started.content)
    assert started.details["process_id"] == process_id
    waited = await call(ctx, "process", action="wait", process_id=process_id, timeout=5)
    assert waited.content.startswith("Finished.") and "exited 0" in waited.content
    assert waited.content.endswith("Recent output:\nhi\nbye")
    listed = await call(ctx, "process", action="list")
    assert process_id in listed.content and "[0 running, 1 total]" in listed.content


async def test_process_tool_poll_log_write_submit_close_kill(ctx: ToolContext) -> None:
    started = await call(
        ctx,
        "terminal",
        command="printf 'name? '; read name; echo hello $name; cat; sleep 30",
        background=True,
    )
    pid = process_id_in(started.content)
    written = await call(ctx, "process", action="write", process_id=pid, data="Ada")
    assert written.content == f"Sent 3 bytes to the stdin of {pid}."
    await call(ctx, "process", action="submit", process_id=pid, data=" Lovelace")
    await call(ctx, "process", action="submit", process_id=pid, data="more")
    closed = await call(ctx, "process", action="close", process_id=pid)
    assert closed.content.startswith(f"Closed the stdin of {pid}.")
    with trio.fail_after(5):
        polled = await call(ctx, "process", action="poll", process_id=pid)
        while "more" not in polled.content:
            await trio.sleep(0.02)
            polled = await call(ctx, "process", action="poll", process_id=pid)
    assert "running" in polled.content and "name? hello Ada Lovelace\nmore" in polled.content
    page = await call(ctx, "process", action="log", process_id=pid, offset=6, limit=5)
    assert "\nhello\n" in page.content and "continue with offset=11" in page.content
    assert page.details == {"offset": 6, "next_offset": 11}
    killed = await call(ctx, "process", action="kill", process_id=pid)
    assert "killed" in killed.content and killed.details["status"] == "killed"


async def test_process_tool_errors(ctx: ToolContext, tmp_path: Path) -> None:
    missing = await call(ctx, "process", action="poll", process_id="proc_000000000000")
    assert missing.is_error and "No background process 'proc_000000000000'" in missing.content
    no_id = await call(ctx, "process", action="kill")
    assert no_id.is_error and "needs a process_id" in no_id.content
    bare = ToolContext.create(tmp_path, tmp_path / "spill", environ=ENV)
    for tool, args in (
        ("process", {"action": "list"}),
        ("terminal", {"command": "sleep 1", "background": True}),
        ("terminal", {"command": "sleep 1", "on_timeout": "background"}),
    ):
        outcome = await call(bare, tool, **args)
        assert outcome.is_error and "not available in this session" in outcome.content
        assert "Nothing was" in outcome.content


async def test_wait_returns_early_on_the_turns_interrupt(ctx: ToolContext) -> None:
    started = await call(ctx, "terminal", command="sleep 30", background=True)
    pid = process_id_in(started.content)
    assert ctx.interrupt is not None
    interrupt = ctx.interrupt

    async def press() -> None:
        await trio.sleep(0.2)
        interrupt.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(press)
        began = time.monotonic()
        waited = await call(ctx, "process", action="wait", process_id=pid, timeout=60)
    assert time.monotonic() - began < 1.0
    assert waited.content.startswith("[Wait interrupted]") and "running" in waited.content
    assert waited.details["outcome"] == "interrupted"


async def test_on_timeout_background_moves_instead_of_killing(
    ctx: ToolContext, notices: Notices
) -> None:
    moved = await call(
        ctx,
        "terminal",
        command="echo warming up; sleep 1.2; echo finally",
        timeout=1,
        on_timeout="background",
    )
    assert not moved.is_error and moved.details["moved_to_background"] is True
    assert moved.content.startswith("warming up\n[Command still running after 1s: moved")
    pid = moved.details["process_id"]
    await notices.wait_for(NoticeKind.COMPLETED)  # it kept running, and tells us at the end
    (done,) = notices.of(NoticeKind.COMPLETED)
    assert done.process_id == pid and done.tail == "warming up\nfinally\n"


async def test_on_timeout_background_that_finishes_in_time_is_a_plain_run(
    ctx: ToolContext, notices: Notices
) -> None:
    outcome = await call(
        ctx, "terminal", command="echo ok; exit 5", timeout=10, on_timeout="background"
    )
    assert outcome.content == "ok\n[exit code: 5]" and outcome.is_error
    assert outcome.details["exit_code"] == 5
    # stdin is empty, as in the foreground: a reader sees end-of-file at once.
    reader = await call(ctx, "terminal", command="cat; echo eof", on_timeout="background")
    assert reader.content == "eof\n[exit code: 0]"
    await trio.sleep(0.1)
    assert notices.items == []  # the run saw the end: no completion notice


async def test_on_timeout_background_interrupted_or_cancelled_is_killed(
    ctx: ToolContext, service: ProcessService
) -> None:
    assert ctx.interrupt is not None
    interrupt = ctx.interrupt

    async def press() -> None:
        await trio.sleep(0.3)
        interrupt.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(press)
        outcome = await call(
            ctx, "terminal", command="echo start; sleep 30", timeout=60, on_timeout="background"
        )
    assert outcome.content == "start\n[Command interrupted]\n[exit code: 130]"
    fresh = ToolContext.create(ctx.cwd, ctx.spill_dir, environ=ENV, services=ctx.services)
    with trio.move_on_after(0.3):
        await call(fresh, "terminal", command="sleep 30", timeout=60, on_timeout="background")
    infos = await service.list()
    assert [i.status for i in infos] == [ProcessStatus.KILLED, ProcessStatus.KILLED]
    for info in infos:
        assert not proc_exists(info.pid) and group_members(info.pgid) == []


async def test_background_watch_patterns_reach_the_notify_sink(
    ctx: ToolContext, notices: Notices
) -> None:
    started = await call(
        ctx,
        "terminal",
        command="echo compiling; echo 'Server ready'; sleep 30",
        background=True,
        watch_patterns=["ready"],
        notify_on_complete=True,
    )
    assert "notified of output lines matching" in started.content
    assert "notified when it finishes" in started.content
    await notices.wait_for(NoticeKind.PATTERN)
    assert notices.of(NoticeKind.PATTERN)[0].lines == ("Server ready",)
    await call(ctx, "process", action="kill", process_id=process_id_in(started.content))
