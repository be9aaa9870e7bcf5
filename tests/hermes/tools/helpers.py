"""Test tools: sleepers that record concurrency, crashers, big outputs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import trio

from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome, decide


@attrs.define
class Probe:
    """Shared record of what the sleeper tools did."""

    active: int = 0
    max_active: int = 0
    started: list[str] = attrs.field(factory=list)
    finished: list[str] = attrs.field(factory=list)
    cancelled: list[str] = attrs.field(factory=list)


class Sleeper(Tool):
    """Sleeps ``delay`` seconds, then answers ``tag``; kind and paths are configurable."""

    input_schema = {
        "type": "object",
        "properties": {
            "tag": {"type": "string"},
            "delay": {"type": "number", "default": 0.0},
            "path": {"type": "string"},
            "size": {"type": "integer", "default": 0},
        },
        "required": ["tag"],
    }

    def __init__(self, name: str, kind: ToolKind, probe: Probe, *, paths: bool = True) -> None:
        self.name = name
        self.kind = kind
        self.probe = probe
        self.paths = paths
        self.description = f"test tool {name}"

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...] | None:
        if not self.paths or "path" not in args:
            return None
        return (cwd / args["path"],)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        tag = args["tag"]
        self.probe.active += 1
        self.probe.max_active = max(self.probe.max_active, self.probe.active)
        self.probe.started.append(tag)
        try:
            await trio.sleep(args["delay"])
        except trio.Cancelled:
            self.probe.cancelled.append(tag)
            raise
        finally:
            self.probe.active -= 1
        self.probe.finished.append(tag)
        size = args["size"]
        return ToolOutcome.ok(tag if not size else tag[0] * size)


class Crasher(Tool):
    name = "crash"
    description = "raises"

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        raise ValueError("boom")


class Gate(Tool):
    """Runs the approval gate on ``command`` (with the call's deadline pause), runs nothing."""

    name = "gate"
    description = "approval only"
    input_schema = {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    }

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        decision = await decide(
            args["command"],
            session=ctx.approvals,
            ask=ctx.ask_approval,
            pause=ctx.pause_deadline,
        )
        return ToolOutcome.ok(decision.verdict.value)
