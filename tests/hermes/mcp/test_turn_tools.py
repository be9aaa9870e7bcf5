"""A running turn's tools are a value: MCP tools added or removed mid-turn (issue 22, item 2).

A real MCP server subprocess changes its tool list (``notifications/tools/list_changed``)
while a turn is held in a slow local tool call; the session sends the turn the new
``ToolSnapshot``, and the turn's next model request in that same turn offers it: a new
tool can be called at once, a removed one is no longer offered and a call to it is a
clear tool error. Hermes refreshes MCP tools between turns; here a change reaches the
turn at its next request (``docs/session.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionHandle, TurnEnd
from hermes.store import StoreClient
from hermes.tools import (
    Tool,
    ToolCall,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolRegistry,
    run_batch,
)

from ..session.helpers import assert_valid, result_text, results_by_id
from .conftest import OpenSession, StartMcp, ready, stdio, wait_until


class GateTool(Tool):
    """Holds its turn in a tool call until the test opens the gate."""

    name = "gate"
    description = "Wait until the gate opens (test tool)."
    kind = ToolKind.READ_ONLY
    toolset = "test"
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.entered = trio.Event()
        self.open = trio.Event()

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return ()

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        self.entered.set()
        await self.open.wait()
        return ToolOutcome.ok("gate opened")


def offered(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body["tools"]]


async def call_server(registry: ToolRegistry, tmp_path: Path, tool: str, **args: Any) -> str:
    """Call one of the server's tools from outside any session (as another session would)."""
    ctx = ToolContext.create(tmp_path, tmp_path / "spill-direct")
    [result] = await run_batch([ToolCall("toolu_direct", tool, args)], registry, ctx)
    assert not result.outcome.is_error, result.outcome.content
    return result.outcome.content


async def change_mid_turn(
    session: SessionHandle, gate: GateTool, change: Any, done: Any
) -> TurnEnd:
    """Run a turn; while it waits in the gate, make ``change`` until ``done``; then open."""
    async with trio.open_nursery() as nursery:
        outcome: list[TurnEnd] = []

        async def run() -> None:
            outcome.append((await session.run("work with the server")).reason)

        nursery.start_soon(run)
        await gate.entered.wait()
        await change()
        await done()
        await session.state()  # the session has handled the registry's notice: it is sent
        gate.open.set()
    return outcome[0]


async def test_a_tool_added_mid_turn_is_offered_at_the_next_request_and_runs(
    open_session: OpenSession,
    system: ActorSystem,
    start_mcp: StartMcp,
    base_registry: ToolRegistry,
    store: StoreClient,
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    gate = GateTool()
    base_registry.register(gate)
    mcp = await start_mcp({"dyn": stdio()}, registry=base_registry)
    link = mcp.link("dyn")
    await wait_until(link, ready)
    session = await open_session()
    fake.enqueue(
        Reply.of(ToolUse("gate", {}, id="toolu_gate")),
        Reply.of(ToolUse("mcp_dyn_late", {}, id="toolu_late")),
        Reply.of("done"),
    )

    async def added() -> None:
        await wait_until(link, lambda link: "late" in link.tools)

    with trio.fail_after(60):
        end = await change_mid_turn(
            session,
            gate,
            lambda: call_server(base_registry, tmp_path, "mcp_dyn_add_tool"),
            added,
        )
    assert end is TurnEnd.COMPLETED
    first, second, third = (r.body for r in fake.message_requests[-3:])
    assert "mcp_dyn_late" not in offered(first)
    assert offered(second) == [*offered(first), "mcp_dyn_late"]  # appended, order kept
    assert offered(third) == offered(second)
    assert "Tool mcp_dyn_late:" in second["system"][0]["text"]  # its guidance too
    transcript = await store.load(session.id)
    assert_valid(transcript)
    results = results_by_id(transcript)
    assert result_text(results["toolu_gate"]) == "gate opened"
    late = results["toolu_late"]
    assert not late.is_error and result_text(late) == "late tool ran"


async def test_a_tool_removed_mid_turn_is_no_longer_offered_and_a_call_is_a_tool_error(
    open_session: OpenSession,
    system: ActorSystem,
    start_mcp: StartMcp,
    base_registry: ToolRegistry,
    store: StoreClient,
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    gate = GateTool()
    base_registry.register(gate)
    mcp = await start_mcp({"dyn": stdio()}, registry=base_registry)
    link = mcp.link("dyn")
    await wait_until(link, ready)
    session = await open_session()
    fake.enqueue(
        Reply.of(ToolUse("gate", {}, id="toolu_gate")),
        Reply.of(ToolUse("mcp_dyn_echo", {"text": "still there?"}, id="toolu_gone")),
        Reply.of("done"),
    )

    async def removed() -> None:
        await wait_until(link, lambda link: "echo" not in link.tools)

    with trio.fail_after(60):
        end = await change_mid_turn(
            session,
            gate,
            lambda: call_server(base_registry, tmp_path, "mcp_dyn_drop_tool", name="echo"),
            removed,
        )
    assert end is TurnEnd.COMPLETED
    first, second, third = (r.body for r in fake.message_requests[-3:])
    assert "mcp_dyn_echo" in offered(first)
    assert offered(second) == [n for n in offered(first) if n != "mcp_dyn_echo"]
    assert "Tool mcp_dyn_echo:" not in second["system"][0]["text"]
    assert "mcp_dyn_echo" not in offered(third)
    transcript = await store.load(session.id)
    assert_valid(transcript)
    gone = results_by_id(transcript)["toolu_gone"]
    assert gone.is_error
    assert result_text(gone).startswith("Unknown tool 'mcp_dyn_echo'. Available tools: ")
    assert "mcp_dyn_add_tool" in result_text(gone)
    # The session's next turn starts with the same set: nothing was left behind.
    fake.enqueue(Reply.of("again"))
    with trio.fail_after(30):
        await session.run("once more")
    assert offered(fake.message_requests[-1].body) == offered(second)
