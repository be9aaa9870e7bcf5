"""The tools a scheduled job's session gets: the job's toolsets, minus what no job may use.

Seed #118: the messaging and clarify toolsets are taken from every job's
session (nobody is there to talk to), and the ``cronjob`` toolset too unless
``[cron] allow_agent_scheduling`` is set, so a job cannot schedule jobs. A
job's ``toolsets`` (tool names or toolset names) narrow what is left; they can
never widen it. The registry is a snapshot: an MCP server that connects while
the run goes on is not offered to it.
"""

from __future__ import annotations

from collections.abc import Iterable

from hermes.tools import Tool, ToolRegistry

from .errors import RequestError

NEVER_IN_JOBS = ("messaging", "clarify")
"""Toolsets no scheduled job's session has (seed #118)."""


def job_registry(
    registry: ToolRegistry, toolsets: Iterable[str] | None, without: Iterable[str]
) -> ToolRegistry:
    """``registry`` narrowed to ``toolsets`` (None: all), minus ``without`` (names or sets).

    A name in ``toolsets`` that matches no tool is refused (``invalid_params``)."""
    refused = set(without)
    tools = [t for t in registry if t.name not in refused and t.toolset not in refused]
    if toolsets is None:
        return ToolRegistry(tools)
    wanted = set(toolsets)
    known = {t.name for t in registry} | {t.toolset for t in registry}
    unknown = sorted(wanted - known)
    if unknown:
        raise RequestError(
            f"toolsets: {unknown[0]!r} names no tool or toolset of this daemon "
            f"(toolsets: {', '.join(sorted({t.toolset for t in registry}))})",
            "invalid_params",
        )
    return ToolRegistry(t for t in tools if t.name in wanted or t.toolset in wanted)


def with_tools(registry: ToolRegistry, tools: Iterable[Tool]) -> ToolRegistry:
    """``registry`` plus ``tools`` (a kanban worker's own; same names replace)."""
    for tool in tools:
        registry.register(tool, replace=True)
    return registry
