"""``hermes mcp serve``: a real MCP client drives a real daemon through it, over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import trio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ..daemon.daemon_proc import LONG_PROMPT, running_daemon


def data(result: Any) -> Any:
    """A tool result's JSON (the SDK's structured content, else its text)."""
    assert not result.is_error, result
    if result.structured_content is not None:
        return result.structured_content.get("result", result.structured_content)
    return json.loads(result.content[0].text)


def test_another_agent_drives_the_daemon_through_mcp_serve(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as daemon:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "hermes", "mcp", "serve"], env=daemon.env
        )

        async def drive() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            with trio.fail_after(180):
                async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
                    await session.initialize()
                    tools = {t.name: t for t in (await session.list_tools()).tools}
                    seen["tools"] = tools
                    seen["prompt"] = data(await session.call_tool("prompt", {"text": "hello"}))
                    sid = seen["prompt"]["session"]
                    seen["follow"] = data(await session.call_tool("follow", {"session": sid}))
                    seen["list"] = data(await session.call_tool("list_sessions", {"limit": 5}))
                    seen["steer"] = await session.call_tool(
                        "steer", {"session": "nope", "text": "x"}
                    )
                    seen["bad"] = await session.call_tool("prompt", {"text": ""})
            return seen

        seen = trio.run(drive)
    tools = seen["tools"]
    assert set(tools) == {"prompt", "follow", "list_sessions", "cancel", "steer"}
    schema = tools["prompt"].input_schema
    assert schema["required"] == ["text"] and schema["properties"]["text"]["minLength"] == 1
    assert seen["prompt"]["reason"] == "completed" and seen["prompt"]["text"]
    assert seen["follow"] == {
        "session": seen["prompt"]["session"],
        "busy": False,
        "messages": seen["follow"]["messages"],
    }
    assert seen["follow"]["messages"] >= 2
    assert seen["prompt"]["session"] in [row["id"] for row in seen["list"]]
    assert seen["steer"].is_error
    assert "unknown_session: no session with id 'nope'" in seen["steer"].content[0].text
    assert seen["bad"].is_error  # the schema refuses an empty prompt


def test_a_running_turn_is_followed_and_cancelled_through_mcp_serve(tmp_path: Path) -> None:
    with running_daemon(tmp_path, "[model]\nfake_event_delay = 0.5\n") as daemon:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "hermes", "mcp", "serve"], env=daemon.env
        )

        async def drive() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            with trio.fail_after(180):
                async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
                    await session.initialize()
                    started = data(
                        await session.call_tool("prompt", {"text": LONG_PROMPT, "wait": False})
                    )
                    sid = started["session"]
                    seen["started"] = started
                    seen["waiting"] = data(
                        await session.call_tool("follow", {"session": sid, "timeout": 0.5})
                    )
                    seen["cancel"] = data(await session.call_tool("cancel", {"session": sid}))
                    seen["after"] = data(await session.call_tool("follow", {"session": sid}))
            return seen

        seen = trio.run(drive)
    assert seen["started"]["how"] == "started"
    assert seen["waiting"]["still_running"] is True
    assert seen["waiting"]["turn"] == seen["started"]["turn"]
    assert seen["cancel"]["turn"] == seen["started"]["turn"]
    assert seen["after"]["busy"] is False
