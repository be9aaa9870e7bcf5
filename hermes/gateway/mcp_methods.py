"""``mcp.list``, ``mcp.test``, ``mcp.enable``, ``mcp.disable``: the daemon's MCP servers;
``mcp.session_enable``, ``mcp.session_disable``: one server's tools in one session.

The servers are the children of ``<root>/sessions/mcp`` (``hermes/mcp``); with
no server configured there is no such actor and ``mcp.list`` answers ``[]``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from actors import ActorRef, ActorSystem
from hermes.daemon.errors import NotFound
from supervisors import ChildInfo, SupervisorClient

from .params import Method, Params

MCP_CALL_TIMEOUT = 15.0
"""Bound on one server actor's answer (its ping and listing are bounded below it)."""


def mcp_methods(
    system: ActorSystem, root_path: str, lookup: Callable[[Params], Awaitable[Any]]
) -> dict[str, Method]:
    """The ``mcp.*`` entries of the method table (``lookup``: a ``session`` param's entry)."""

    async def servers() -> list[ChildInfo]:
        ref = system.lookup(f"{root_path}/sessions/mcp")
        return [] if ref is None else await SupervisorClient(ref).which_children()

    async def mcp_list(p: Params) -> Any:
        p.done()
        from hermes.mcp.server import GetStatus  # the SDK loads only once servers run

        rows = []
        for child in await servers():
            if child.ref is None or not child.ref.is_alive:  # between two incarnations
                rows.append({"name": child.id, "state": child.state})
                continue
            rows.append(await child.ref.call(GetStatus(), timeout=MCP_CALL_TIMEOUT))
        return rows

    async def server(name: str) -> ActorRef:
        known = await servers()
        found = [c.ref for c in known if c.id == name and c.ref is not None]
        if not found:
            listed = ", ".join(c.id for c in known) or "none configured"
            raise NotFound(f"no running MCP server {name!r} (servers: {listed})")
        return found[0]

    async def mcp_test(p: Params) -> Any:
        name = p.text("name")
        p.done()
        from hermes.mcp.probe import probe
        from hermes.mcp.server import GetConfig, GetDataDir, GetStatus

        ref = await server(name)
        live: dict[str, Any] = await ref.call(GetStatus(), timeout=MCP_CALL_TIMEOUT)
        if live["state"] == "disabled" or str(live["reason"]).startswith("not started:"):
            return {"live": live, "probe": None}  # disabled, or blocked: never spawned
        config = await ref.call(GetConfig(), timeout=MCP_CALL_TIMEOUT)
        data_dir = await ref.call(GetDataDir(), timeout=MCP_CALL_TIMEOUT)
        return {"live": live, "probe": await probe(config, data_dir=data_dir)}

    def switch(on: bool) -> Method:
        async def handler(p: Params) -> Any:
            name = p.text("name")
            p.done()
            from hermes.mcp.server import SetEnabled

            return await (await server(name)).call(SetEnabled(on), timeout=MCP_CALL_TIMEOUT)

        return handler

    def session_switch(on: bool) -> Method:
        async def handler(p: Params) -> Any:
            name = p.text("name")
            entry = await lookup(p)
            p.done()
            await server(name)  # a server of this daemon, or not_found
            off = await entry.handle.set_mcp_server(name, on)
            return {
                "session": entry.session_id,
                "name": name,
                "enabled": on,
                "disabled": list(off),
            }

        return handler

    return {
        "mcp.list": mcp_list,
        "mcp.test": mcp_test,
        "mcp.enable": switch(True),
        "mcp.disable": switch(False),
        "mcp.session_enable": session_switch(True),
        "mcp.session_disable": session_switch(False),
    }
