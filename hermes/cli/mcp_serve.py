"""``hermes mcp serve``: this daemon as an MCP server over stdio, for other agents and editors.

Each tool is one or two requests to the running daemon over its WebSocket
gateway (found the way every CLI command finds it, at each call, so a
restarted daemon is picked up). The server is the SDK's ``MCPServer``, run
on trio. Tools:

- ``prompt``: send a prompt to a new session (or a given one) and, unless
  ``wait`` is false, wait for that turn's end: its reason and text;
- ``follow``: wait for a session's running turn to end (at once when idle);
- ``list_sessions``, ``cancel``, ``steer``.

A daemon error (an unknown session, a busy one...) is the tool's error
result, with the daemon's code and message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import trio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from hermes.daemon.endpoint import NoDaemon
from hermes.gateway.client import GatewayError, connect

Endpoint = Callable[[], Any]
"""Finds the running daemon (``hermes.daemon.endpoint.find_daemon``); raises ``NoDaemon``."""

Seconds = Annotated[float, Field(gt=0, le=3600, description="how long to wait, in seconds")]
SessionId = Annotated[str, Field(min_length=1, max_length=200, description="a session id")]


def build_server(endpoint: Endpoint) -> MCPServer:
    """The MCP server whose tools drive the daemon ``endpoint()`` finds."""
    app = MCPServer(
        "hermes",
        instructions="Drive a running Hermes daemon: start sessions, follow, steer, cancel.",
    )

    @asynccontextmanager
    async def daemon() -> AsyncIterator[Any]:
        """A connection to the daemon; its error answers become this tool's error."""
        try:
            where = endpoint()
        except NoDaemon as exc:
            raise ToolError(f"no Hermes daemon is running ({exc})") from None
        try:
            async with connect(where) as client:
                yield client
        except Exception as exc:  # the client's nursery may wrap the answer in a group
            error = _leaf(exc)
            if isinstance(error, GatewayError):
                raise ToolError(f"{error.code}: {error.message}") from None
            if isinstance(error, ToolError):
                raise error from None
            raise

    async def wait_for(client: Any, session: str, turn: Any, timeout: float) -> dict[str, Any]:
        with trio.move_on_after(timeout):
            async for event in client.events:
                payload = event.get("payload") or {}
                if event["type"] == "turn.completed" and (
                    turn is None or payload.get("turn") == turn
                ):
                    return {"session": session, **payload}
            raise ToolError("the daemon closed the connection before the turn ended")
        return {"session": session, "still_running": True, "turn": turn}

    @app.tool()
    async def prompt(
        text: Annotated[str, Field(min_length=1, description="the prompt")],
        session: Annotated[
            str | None, Field(description="a session id; none: a new session")
        ] = None,
        wait: Annotated[bool, Field(description="wait for the turn to end")] = True,
        timeout: Seconds = 600.0,
    ) -> dict[str, Any]:
        """Send a prompt to a new or existing session; with wait, answer the turn's result."""
        async with daemon() as client:
            sid = session or (await client.call("session.create"))["id"]
            if wait:
                await client.call("events.subscribe", session=sid)
            accepted = await client.call("prompt.submit", session=sid, text=text)
            if not wait:
                return {"session": sid, **accepted}
            turn = accepted.get("turn") if accepted.get("how") == "started" else None
            return await wait_for(client, sid, turn, timeout)

    @app.tool()
    async def follow(session: SessionId, timeout: Seconds = 600.0) -> dict[str, Any]:
        """Wait for the session's running turn to end and answer its result (idle: at once)."""
        async with daemon() as client:
            await client.call("events.subscribe", session=session)  # first: nothing missed
            state = await client.call("session.get", session=session)
            if not state.get("busy"):
                return {"session": session, "busy": False, "messages": state.get("messages")}
            return await wait_for(client, session, state.get("turn"), timeout)

    @app.tool()
    async def list_sessions(
        limit: Annotated[int, Field(ge=1, le=500, description="newest first")] = 20,
    ) -> list[dict[str, Any]]:
        """The daemon's sessions, newest first: id, title, busy, messages, updated_at."""
        keep = ("id", "title", "busy", "running", "messages", "updated_at", "ended")
        async with daemon() as client:
            rows = await client.call("session.list", limit=limit)
        return [{k: row.get(k) for k in keep} for row in rows]

    @app.tool()
    async def cancel(
        session: SessionId,
        reason: Annotated[str | None, Field(max_length=500)] = None,
    ) -> dict[str, Any]:
        """Hard-stop the session's running turn; answers once it is idle and saved."""
        params = {"session": session} | ({"reason": reason} if reason else {})
        async with daemon() as client:
            result: dict[str, Any] = await client.request("cancel", params)
        return result

    @app.tool()
    async def steer(
        session: SessionId, text: Annotated[str, Field(min_length=1)]
    ) -> dict[str, Any]:
        """Add guidance to the session's running turn, delivered at its next step."""
        async with daemon() as client:
            result: dict[str, Any] = await client.call("steer", session=session, text=text)
        return result

    return app


def _leaf(exc: BaseException) -> GatewayError | ToolError | None:
    """The daemon's error answer or a tool's own error in ``exc`` (groups searched)."""
    if isinstance(exc, GatewayError | ToolError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _leaf(inner)
            if found is not None:
                return found
    return None


def serve(endpoint: Endpoint) -> None:
    """Serve over stdin/stdout until stdin closes (on trio, like the rest of Hermes)."""
    anyio.run(build_server(endpoint).run_stdio_async, backend="trio")
