"""The operator's subagent spawn pause: ``subagents.pause``, ``subagents.resume``,
``subagents.status`` (and ``POST /subagents/pause``, ``POST /subagents/resume``,
``GET /subagents``).

A pause is daemon-wide: every new ``delegate_task`` is refused with a clear
reason until it is resumed; running children go on. Each answers
``{"paused": bool}`` as it is after the call. It lives in the daemon's
``SubagentRuntime`` (held by the sessions manager), so it lasts until the
daemon stops.
"""

from __future__ import annotations

from typing import Any

from hermes.daemon.manager import ManagerClient, SpawnPause

from .params import Method, Params


def spawn_methods(manager: ManagerClient) -> dict[str, Method]:
    """The spawn pause's entries of the method table."""

    def setting(paused: bool | None) -> Method:
        async def method(p: Params) -> Any:
            p.done()
            return await manager.call(SpawnPause(paused))

        return method

    return {
        "subagents.pause": setting(True),
        "subagents.resume": setting(False),
        "subagents.status": setting(None),
    }


def spawn_route(verb: str, rest: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``GET /subagents``; ``POST /subagents/pause`` and ``/subagents/resume``."""
    if verb == "GET" and rest == []:
        return "subagents.status", {}
    if verb == "POST" and rest in (["pause"], ["resume"]):
        return f"subagents.{rest[0]}", {}
    return None
