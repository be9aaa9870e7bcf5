"""Per-session enable and disable of an MCP server: one session's switch, another's tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.model import ModelClient
from hermes.store import StoreClient
from hermes.tools import ToolRegistry

from ..session.helpers import assert_valid, result_text, results_by_id
from .conftest import OpenSession, StartMcp, ready, stdio, wait_until


def offered(body: dict[str, Any]) -> set[str]:
    return {t["name"] for t in body["tools"]}


def stable_tier(body: dict[str, Any]) -> str:
    text: str = body["system"][0]["text"]
    return text


async def test_a_session_that_disables_a_server_loses_its_tools_and_the_other_keeps_them(
    open_session: OpenSession,
    system: ActorSystem,
    start_mcp: StartMcp,
    base_registry: ToolRegistry,
    store: StoreClient,
    client: ModelClient,
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    mcp = await start_mcp({"kb": stdio(), "other": stdio()}, registry=base_registry)
    await wait_until(mcp.link("kb"), ready)
    await wait_until(mcp.link("other"), ready)
    one = await open_session("one")
    two = await open_session("two")

    fake.enqueue(Reply.of("before"))
    with trio.fail_after(30):
        await one.run("hello")
    before = fake.message_requests[-1].body
    assert "mcp_kb_echo" in offered(before)
    assert "Tool mcp_kb_echo:" in stable_tier(before)

    with trio.fail_after(30):
        assert await one.set_mcp_server("kb", False) == ("kb",)
        assert await one.set_mcp_server("kb", False) == ("kb",)  # twice: no change

    # The model of session one still asks for the tool: it is unknown there now.
    fake.enqueue(
        Reply.of(ToolUse("mcp_kb_echo", {"text": "x"}, id="toolu_gone")),
        Reply.of("done"),
    )
    with trio.fail_after(30):
        await one.run("use kb")
    first, second = fake.message_requests[-2].body, fake.message_requests[-1].body
    for body in (first, second):
        names = offered(body)
        assert not any(n.startswith("mcp_kb_") for n in names)
        assert "mcp_other_echo" in names and "read_file" in names
        assert "mcp_kb_" not in stable_tier(body)
    assert stable_tier(first) == stable_tier(second)  # byte-stable while the set holds
    assert first["system"][1:] == before["system"][1:]  # only the stable tier was rebuilt
    transcript = await store.load(one.id)
    assert_valid(transcript)
    assert "Unknown tool 'mcp_kb_echo'" in result_text(results_by_id(transcript)["toolu_gone"])

    # Session two never turned it off: it still has and calls the server's tools.
    fake.enqueue(
        Reply.of(ToolUse("mcp_kb_echo", {"text": "two"}, id="toolu_two")),
        Reply.of("done"),
    )
    with trio.fail_after(30):
        await two.run("use kb")
    assert "mcp_kb_echo" in offered(fake.message_requests[-1].body)
    assert "Tool mcp_kb_echo:" in stable_tier(fake.message_requests[-1].body)
    assert result_text(results_by_id(await store.load(two.id))["toolu_two"]) == "echo: two"

    # Turned on again, session one is offered the server's tools as before.
    with trio.fail_after(30):
        assert await one.set_mcp_server("kb", True) == ()
    fake.enqueue(Reply.of("back"))
    with trio.fail_after(30):
        await one.run("again")
    again = fake.message_requests[-1].body
    assert offered(again) == offered(before)
    assert stable_tier(again) == stable_tier(before)


def test_a_session_view_hides_a_servers_tools_and_keeps_the_shared_tuple_otherwise() -> None:
    import mcp_types as types

    from hermes.mcp import parse_mcp
    from hermes.mcp.link import ServerLink
    from hermes.mcp.tools import McpTool
    from hermes.session.tool_view import SessionTools
    from hermes.subagents.child import child_registry
    from hermes.subagents.tasks import TaskSpec
    from hermes.tools import ToolCall, default_registry

    config, errors = parse_mcp({"servers": {"kb": {"command": "x"}}}, "t.toml")
    assert errors == []
    shared = default_registry()
    link = ServerLink(config=config.servers[0])
    remote = types.Tool(name="echo", input_schema={"type": "object"})
    shared.register(McpTool(link, remote, "mcp_kb_echo"))
    view = SessionTools(shared)
    assert view.specs() is shared.specs()  # nothing off: the very tuple every session sends
    assert view.set_server("kb", False) and not view.set_server("kb", False)
    off = view.specs()
    assert "mcp_kb_echo" not in [s.name for s in off] and view.specs() is off
    assert len(off) == len(shared.specs()) - 1
    assert "mcp_kb_echo" not in view and view.get("mcp_kb_echo") is None
    unknown = view.prepare(ToolCall("toolu_1", "mcp_kb_echo", {}))
    assert "Unknown tool 'mcp_kb_echo'" in getattr(unknown, "content", "")
    child = child_registry(view, TaskSpec(goal="g"), frozenset(), False)
    assert "mcp_kb_echo" not in child and "read_file" in child  # a subagent inherits the switch
    assert view.set_server("kb", True) and view.specs() is shared.specs()
