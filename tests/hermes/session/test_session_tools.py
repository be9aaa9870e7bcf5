"""Batches and the built-in tools through a real session (real files, real processes)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionConfig, SessionDeps, TurnEnd, start_session
from hermes.store import StoreClient
from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome, ToolRegistry, default_registry

from .conftest import SessionFactory
from .helpers import (
    assert_valid,
    payloads,
    result_text,
    results_by_id,
    tool_results,
    wire_result_text,
    wire_results,
)


class NapTool(Tool):
    """A read-only tool that takes a while: sleeps ``seconds``, then answers ``text``.

    The built-in read-only tools finish in microseconds, so ordering and deadline
    tests need one whose duration they choose. It has no deadline of its own.
    """

    name = "nap"
    description = "Sleep for a number of seconds, then answer the given text."
    kind = ToolKind.READ_ONLY
    toolset = "test"
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "text": {"type": "string"}},
        "required": ["seconds", "text"],
    }

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return ()

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        await trio.sleep(args["seconds"])
        return ToolOutcome.ok(args["text"])


@pytest.fixture
def registry() -> ToolRegistry:
    registry = default_registry()
    registry.register(NapTool())
    return registry


# -- batches -----------------------------------------------------------------------------


async def test_results_go_back_in_call_order_whatever_finishes_first(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("alpha\n")
    session = await open_session()
    fake.enqueue(
        Reply.of(
            ToolUse("nap", {"seconds": 0.4, "text": "slow one"}, id="toolu_slow"),
            ToolUse("nap", {"seconds": 0.2, "text": "middle one"}, id="toolu_mid"),
            ToolUse("read_file", {"path": "a.txt"}, id="toolu_fast"),
        ),
        Reply.of("ok"),
    )
    with session.subscribe() as sub, trio.fail_after(10):
        started = trio.current_time()
        result = await session.run("go")
        elapsed = trio.current_time() - started
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert elapsed < 2.0  # the three ran concurrently
    finished = [p.call_id for p in payloads(events, "ToolCompleted")]
    assert finished == ["toolu_fast", "toolu_mid", "toolu_slow"]
    transcript = await store.load(session.id)
    assert_valid(transcript)
    blocks = tool_results(transcript.messages[2])
    assert [b.tool_use_id for b in blocks] == ["toolu_slow", "toolu_mid", "toolu_fast"]
    assert [result_text(b) for b in blocks[:2]] == ["slow one", "middle one"]
    sent = wire_results(fake.message_requests[1].body["messages"][-1])
    assert [b["tool_use_id"] for b in sent] == ["toolu_slow", "toolu_mid", "toolu_fast"]


async def test_a_call_past_its_deadline_gets_a_timed_out_result(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_session(call_timeout=0.2)
    fake.enqueue(
        Reply.of(
            ToolUse("nap", {"seconds": 30, "text": "never"}, id="toolu_nap"),
            # The terminal's own timeout decides its deadline, not the session default:
            ToolUse("terminal", {"command": "sleep 0.4; echo finished"}, id="toolu_slow_ok"),
            # ... and it stops the command itself at that timeout (exit code 124).
            ToolUse("terminal", {"command": "sleep 30", "timeout": 1}, id="toolu_sleep"),
        ),
        Reply.of("noted"),
    )
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("wait")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    assert_valid(transcript)
    results = results_by_id(transcript)
    nap = results["toolu_nap"]
    assert nap.is_error
    assert result_text(nap).startswith("[Tool call timed out after 0.2 s: nap was stopped")
    assert result_text(results["toolu_slow_ok"]) == "finished\n[exit code: 0]"
    sleep = result_text(results["toolu_sleep"])
    assert "[Command timed out after 1s]" in sleep and "[exit code: 124]" in sleep
    status = {p.call_id: p.status for p in payloads(events, "ToolCompleted")}
    assert status == {"toolu_nap": "timeout", "toolu_slow_ok": "ok", "toolu_sleep": "error"}


async def test_a_huge_result_is_spilled_to_a_file_with_a_preview(
    config: SessionConfig,
    open_session: SessionFactory,
    fake: FakeProvider,
    store: StoreClient,
) -> None:
    session = await open_session()
    command = "head -c 150000 /dev/zero | tr '\\0' x; echo; echo END-OF-OUTPUT"
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": command}, id="toolu_big")), Reply.of("ok")
    )
    with trio.fail_after(10):
        result = await session.run("print a lot")
    assert result.reason is TurnEnd.COMPLETED
    spilled = config.spill_dir / "toolu_big-terminal.txt"
    full = spilled.read_text()
    assert full.startswith("x" * 150_000 + "\nEND-OF-OUTPUT")
    assert full.endswith("[exit code: 0]")

    transcript = await store.load(session.id)
    assert_valid(transcript)
    text = result_text(results_by_id(transcript)["toolu_big"])
    assert len(text) < 5_000
    assert text.startswith("[Output too large for the conversation: 150,")
    assert f"The full output is saved to {spilled} " in text
    assert "END-OF-OUTPUT" in text  # the tail of the preview
    sent = wire_result_text(wire_results(fake.message_requests[1].body["messages"][-1])[0])
    assert sent == text


# -- built-in tools ----------------------------------------------------------------------


async def test_terminal_runs_in_its_own_process_group(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_session()
    # Fields 5 and 6 of /proc/PID/stat are the process group and the session.
    command = 'read -r -a f < /proc/$$/stat; echo "$$ ${f[4]} ${f[5]}"'
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": command})), Reply.of("ok"))
    with trio.fail_after(10):
        await session.run("who am i")
    transcript = await store.load(session.id)
    first_line = result_text(tool_results(transcript.messages[2])[0]).splitlines()[0]
    pid, pgid, sid = (int(x) for x in first_line.split())
    assert pid == pgid == sid
    assert pgid != os.getpgrp()
    assert sid != os.getsid(0)


async def test_the_daemons_secrets_never_reach_a_command(
    system: ActorSystem,
    config: SessionConfig,
    deps: SessionDeps,
    fake: FakeProvider,
    store: StoreClient,
    tmp_path: Path,
) -> None:
    environ = {
        "ANTHROPIC_API_KEY": "sk-secret-1234",
        "GITHUB_TOKEN": "ghp-secret-5678",
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "HERMES_VISIBLE": "yes",
    }
    session = await start_session(system, config, attrs.evolve(deps, environ=environ))
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": "env"})), Reply.of("ok"))
    with trio.fail_after(10):
        result = await session.run("show the environment")
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    output = result_text(tool_results(transcript.messages[2])[0])
    assert "HERMES_VISIBLE=yes" in output
    assert f"HOME={tmp_path}" in output
    assert "PAGER=cat" in output
    for leaked in ("sk-secret", "ANTHROPIC_API_KEY", "ghp-secret", "GITHUB_TOKEN"):
        assert leaked not in output
    assert "sk-secret" not in str(fake.message_requests[-1].body)


async def test_write_patch_read_and_search_files(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    session = await open_session()
    path = "notes/todo.md"
    fake.enqueue(
        # One batch: calls on the same file run one after the other, in call order.
        Reply.of(
            ToolUse("write_file", {"path": path, "content": "alpha\nbeta\n"}, id="toolu_w"),
            ToolUse("patch", {"path": path, "old_string": "beta", "new_string": "gamma"}, id="p1"),
            ToolUse("patch", {"path": path, "old_string": "delta", "new_string": "x"}, id="p2"),
        ),
        Reply.of(
            ToolUse("read_file", {"path": path}, id="toolu_r"),
            ToolUse("search_files", {"pattern": "gam+a"}, id="toolu_s"),
            ToolUse("search_files", {"pattern": "todo", "target": "files"}, id="toolu_f"),
        ),
        Reply.of("done"),
    )
    with trio.fail_after(10):
        result = await session.run("edit the notes")
    assert result.reason is TurnEnd.COMPLETED
    assert (workdir / path).read_text() == "alpha\ngamma\n"

    transcript = await store.load(session.id)
    assert_valid(transcript)
    results = results_by_id(transcript)
    wrote = result_text(results["toolu_w"])
    assert wrote.startswith("Wrote 11 bytes (2 lines) to ") and "(created)" in wrote
    assert not results["p1"].is_error
    assert result_text(results["p1"]).startswith(f"Patched {workdir / path}: replaced 1 ")
    assert "+gamma" in result_text(results["p1"])
    missing = results["p2"]
    assert missing.is_error
    assert "old_string was not found in" in result_text(missing)
    assert "Nothing was changed" in result_text(missing)
    assert result_text(results["toolu_r"]) == "     1|alpha\n     2|gamma"
    assert result_text(results["toolu_s"]) == "notes/todo.md:2: gamma"
    assert "notes/todo.md" in result_text(results["toolu_f"])
