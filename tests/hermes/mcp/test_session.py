"""MCP tools in real session turns: the fake provider's scripted model calls them."""

from __future__ import annotations

from pathlib import Path

import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.model import ModelClient
from hermes.session import TurnEnd
from hermes.store import StoreClient
from hermes.tools import ToolRegistry

from ..session.helpers import (
    assert_valid,
    completed_results,
    result_text,
    results_by_id,
    wire_result_text,
)
from .conftest import OpenSession, StartMcp, ready, stdio, wait_until


async def wait_for_file(path: Path) -> None:
    """Wait (polling, bounded by the caller) until the server wrote ``path``."""
    while True:
        if await trio.Path(path).exists():
            return
        await trio.sleep(0.01)


async def test_a_turn_calls_an_mcp_tool_end_to_end(
    open_session: OpenSession,
    system: ActorSystem,
    start_mcp: StartMcp,
    base_registry: ToolRegistry,
    store: StoreClient,
    client: ModelClient,
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    mcp = await start_mcp({"kb": stdio()}, registry=base_registry)
    await wait_until(mcp.link("kb"), ready)
    session = await open_session()
    fake.enqueue(
        Reply.of(ToolUse("mcp_kb_echo", {"text": "from the model"}, id="toolu_echo")),
        Reply.of("done"),
    )
    results = await completed_results(session, store, "use the knowledge base")
    assert result_text(results["toolu_echo"]) == "echo: from the model"
    # The model was offered the tool with the server's schema, next to the built-ins.
    first = fake.message_requests[0].body
    offered = {t["name"]: t for t in first["tools"]}
    assert "read_file" in offered
    assert offered["mcp_kb_echo"]["input_schema"]["properties"]["text"]["type"] == "string"
    sent = fake.message_requests[1].body["messages"][-1]["content"]
    assert [wire_result_text(b) for b in sent if b.get("type") == "tool_result"] == [
        "echo: from the model"
    ]


async def test_a_call_past_the_servers_timeout_is_cancelled_and_the_server_told(
    open_session: OpenSession,
    system: ActorSystem,
    start_mcp: StartMcp,
    base_registry: ToolRegistry,
    store: StoreClient,
    client: ModelClient,
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    mcp = await start_mcp({"slow": stdio(timeout=1)}, registry=base_registry)
    link = mcp.link("slow")
    await wait_until(link, ready)
    session = await open_session()
    marker = str(tmp_path / "hang")
    fake.enqueue(
        Reply.of(ToolUse("mcp_slow_hang", {"marker": marker}, id="toolu_hang")),
        Reply.of("gave up"),
    )
    with trio.fail_after(30):
        result = await session.run("wait for it")
        await wait_for_file(Path(marker + ".cancelled"))  # notifications/cancelled arrived
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    assert_valid(transcript)
    hang = results_by_id(transcript)["toolu_hang"]
    assert hang.is_error
    assert result_text(hang).startswith("[Tool call timed out after 1 s: mcp_slow_hang")
    # The connection is still good for the next call.
    assert link.state == "ready" and link.connects == 1


async def test_cancelling_the_turn_cancels_the_mcp_call_and_records_a_result(
    open_session: OpenSession,
    system: ActorSystem,
    start_mcp: StartMcp,
    base_registry: ToolRegistry,
    store: StoreClient,
    client: ModelClient,
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    mcp = await start_mcp({"slow": stdio()}, registry=base_registry)
    await wait_until(mcp.link("slow"), ready)
    session = await open_session()
    marker = str(tmp_path / "hang")
    fake.enqueue(Reply.of(ToolUse("mcp_slow_hang", {"marker": marker}, id="toolu_hang")))
    with trio.fail_after(30):
        await session.prompt("wait forever")
        await wait_for_file(Path(marker + ".started"))
        cancelled = await session.cancel("stop")
        transcript = await store.load(session.id)
        await wait_for_file(Path(marker + ".cancelled"))
    assert cancelled.result is not None and cancelled.result.reason is TurnEnd.CANCELLED
    assert_valid(transcript)
    hang = results_by_id(transcript)["toolu_hang"]
    assert hang.is_error and "cancelled" in result_text(hang).lower()


async def test_a_server_crashing_mid_turn_leaves_a_valid_transcript(
    open_session: OpenSession,
    system: ActorSystem,
    start_mcp: StartMcp,
    base_registry: ToolRegistry,
    store: StoreClient,
    client: ModelClient,
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    mcp = await start_mcp({"bad": stdio()}, registry=base_registry)
    link = mcp.link("bad")
    await wait_until(link, ready)
    session = await open_session()
    fake.enqueue(
        Reply.of(
            ToolUse("mcp_bad_crash", {}, id="toolu_crash"),
            ToolUse("read_file", {"path": "missing.txt"}, id="toolu_read"),
        ),
        Reply.of(ToolUse("mcp_bad_echo", {"text": "still there?"}, id="toolu_echo")),
        Reply.of("the server is down"),
    )
    results = await completed_results(session, store, "crash it")
    crash, echo = results["toolu_crash"], results["toolu_echo"]
    assert crash.is_error and "closed the connection during the call to crash" in (
        result_text(crash)
    )
    assert echo.is_error  # unavailable, or (had the model answered first) the closed connection
    assert result_text(echo).startswith("MCP server 'bad' ")
    await wait_until(link, lambda link: link.connects == 2 and link.state == "ready")
