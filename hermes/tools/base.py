"""The tool abstraction: what a tool is, what a call is, and what a run returns.

A tool is a class with a name, a description, a JSON input schema, a *kind*
(read-only, write, other) that the batch planner uses to decide what may run in
parallel, and an async ``run(args, ctx)`` that returns a ``ToolOutcome``.
Built-in tools, and later background processes, subagents and memory, all
subclass ``Tool``; nothing else in the package knows which tool it is running.
"""

from __future__ import annotations

import abc
import enum
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from hermes.model.types import ToolSpec, ToolUseBlock

if TYPE_CHECKING:
    from .context import ToolContext


class ToolKind(enum.Enum):
    """How a tool touches the world; decides batch scheduling."""

    READ_ONLY = "read_only"
    """Reads only: runs in parallel with other reads (and with writes elsewhere)."""
    WRITE = "write"
    """Writes the paths ``touched_paths`` names: parallel only when paths do not overlap."""
    OTHER = "other"
    """Anything else (shell commands, subagents...): runs alone, in call order."""


@attrs.frozen(slots=True)
class ToolOutcome:
    """What a tool run produced: text for the model, an error flag, structured details.

    ``details`` is for the daemon (exit codes, bytes written, paths), never sent
    to the model; the model sees ``content`` only.
    """

    content: str
    is_error: bool = False
    details: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def ok(cls, content: str, **details: Any) -> ToolOutcome:
        return cls(content, False, details)

    @classmethod
    def error(cls, content: str, **details: Any) -> ToolOutcome:
        return cls(content, True, details)


@attrs.frozen(slots=True)
class MalformedArguments:
    """Arguments the model sent that could not be read at all (broken JSON, not an object)."""

    problem: str


@attrs.frozen(slots=True)
class ToolCall:
    """One tool call requested by the model: id, tool name, raw arguments.

    ``args`` is whatever the model sent; it need not be a JSON object (the
    registry turns a non-object into a clear error result).
    """

    id: str
    name: str
    args: object

    @classmethod
    def from_block(cls, block: ToolUseBlock, problem: str | None = None) -> ToolCall:
        """The call a tool_use block asks for; ``problem`` marks unreadable arguments."""
        if problem is not None:
            return cls(block.id, block.name, MalformedArguments(problem))
        return cls(block.id, block.name, block.input)


ProgressKind = Literal["start", "output", "end"]


@attrs.frozen(slots=True)
class ToolProgress:
    """A progress report from a running call (start, some output, end)."""

    call_id: str
    tool: str
    kind: ProgressKind
    text: str = ""


class Tool(abc.ABC):
    """Base class of every tool.

    Subclasses set the class attributes and implement ``run``. ``run`` receives
    arguments already validated and coerced against ``input_schema`` (defaults
    filled in). It returns a ``ToolOutcome`` for every expected failure (missing
    file, bad pattern...); an unexpected exception is turned into an error
    result by the registry. It must never swallow ``trio.Cancelled``: anything
    it started (processes, tasks) is cleaned up in shielded, time-bounded
    ``finally`` blocks and the cancellation propagates.
    """

    name: str = ""
    description: str = ""
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}
    kind: ToolKind = ToolKind.OTHER
    toolset: str = "misc"
    """A named group (``file``, ``terminal``...) for offering subsets of tools."""
    holds_interrupt: bool = False
    """While a call of it runs, its turn holds off soft interrupts: a new prompt in
    ``interrupt`` busy mode is queued instead (``delegate_task``: its children run)."""
    spawns_subagents: bool = False
    """A call of it starts subagents (``delegate_task``): the turn's spawn cap counts it
    (seed #191)."""

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...] | None:
        """The absolute paths this call reads (READ_ONLY) or writes (WRITE).

        ``None`` means unknown: a write with unknown paths runs alone, a read
        with unknown paths never shares a stage with a write. The default is
        ``None``.
        """
        return None

    def call_timeout(self, args: Mapping[str, Any]) -> float | None:
        """This call's own deadline in seconds; ``None`` uses the batch default.

        A tool with its own timeout argument (the terminal) returns it plus a
        margin for cleanup; ``math.inf`` exempts a call (a subagent that has its
        own liveness checks).
        """
        return None

    def spec(self) -> ToolSpec:
        """The tool as offered to the model."""
        return ToolSpec(self.name, self.description, dict(self.input_schema))

    @abc.abstractmethod
    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Do the work. ``args`` is validated; ``ctx`` carries cwd, env, approvals."""


NO_TIMEOUT = math.inf
"""Return from ``Tool.call_timeout`` to exempt a call from the batch deadline."""
