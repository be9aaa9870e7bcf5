"""The tool registry: which tools exist, what the model is offered, how a call is resolved.

``prepare(call)`` turns a raw ``ToolCall`` into a ``PreparedCall`` (tool found,
arguments validated and coerced) or into the error ``ToolOutcome`` the model
should see (unknown tool naming the available ones, arguments that are not an
object, a missing or mistyped field). ``invoke`` runs a prepared call and turns
an unexpected exception from the tool into an error result; cancellation and
other ``BaseException``s propagate untouched.

A subagent gets ``registry.subset(names)``: the intersection with what the
parent has, so a child never gains a tool.

A registry is shared (MCP servers add and remove their tools in the daemon's
one registry at run time); a turn works on a ``snapshot()``, a ``ToolSnapshot``
no one can change, and learns of a change as a message from its session, which
``watch`` tells (once per change, however many tools it touched).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from hermes.model.types import ToolSpec

from .base import MalformedArguments, Tool, ToolCall, ToolOutcome
from .context import ToolContext
from .schema import ArgumentError, validate


@attrs.frozen(slots=True)
class PreparedCall:
    """A call whose tool exists and whose arguments fit the schema."""

    call: ToolCall
    tool: Tool
    args: Mapping[str, Any]


class ToolRegistry:
    """Named tools, in registration order."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: tuple[ToolSpec, ...] | None = None
        """``specs()``, built once per set of tools (a session asks before every request)."""
        self._snapshot: ToolSnapshot | None = None
        self._watchers: dict[object, Callable[[], None]] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        """Add ``tool``; a second tool of the same name is an error unless ``replace``."""
        if not tool.name:
            raise ValueError(f"{type(tool).__name__} has no name")
        if tool.name in self._tools and not replace:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._changed()

    def unregister(self, name: str) -> None:
        if self._tools.pop(name, None) is not None:
            self._changed()

    def _changed(self) -> None:
        self._specs = self._snapshot = None
        if self._watchers:  # each told once: it watches again when it has looked
            watchers, self._watchers = self._watchers, {}
            for notify in watchers.values():
                notify()

    def watch(self, key: object, notify: Callable[[], None]) -> None:
        """Call ``notify`` (synchronously, in the changer's task) at the next change of
        the tool set, once: a burst of changes (a server's whole list) is one call. It
        must not raise; ``key`` replaces an earlier watch of the same key."""
        self._watchers[key] = notify

    def unwatch(self, key: object) -> None:
        self._watchers.pop(key, None)

    def snapshot(self) -> ToolSnapshot:
        """The tools as they are now, as a value no one can change (the same object
        until the set changes; its ``specs()`` is this registry's tuple)."""
        if self._snapshot is None:
            self._snapshot = ToolSnapshot(self._tools.values(), self.specs())
        return self._snapshot

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is offered, in registration order.

        The same tuple until a tool is registered or removed (a tool's name,
        description and schema are fixed once it is built), so a request does
        not rebuild every schema and the model layer can reuse their encoding.
        """
        if self._specs is None:
            self._specs = tuple(tool.spec() for tool in self._tools.values())
        return self._specs

    def subset(
        self, names: Iterable[str] | None = None, *, toolsets: Iterable[str] | None = None
    ) -> ToolRegistry:
        """The tools named in ``names`` or belonging to ``toolsets`` that this registry has.

        Names this registry does not have are ignored: a subset never gains tools.
        With neither argument, an empty registry.
        """
        wanted = set(names or ())
        sets = set(toolsets or ())
        return ToolRegistry(
            t for t in self._tools.values() if t.name in wanted or t.toolset in sets
        )

    def prepare(self, call: ToolCall) -> PreparedCall | ToolOutcome:
        """Resolve and validate ``call``; an error outcome when it cannot run."""
        tool = self._tools.get(call.name)
        if tool is None:
            available = ", ".join(self._tools) or "(none)"
            return ToolOutcome.error(
                f"Unknown tool {call.name!r}. Available tools: {available}.",
                reason="unknown_tool",
            )
        if isinstance(call.args, MalformedArguments):
            return ToolOutcome.error(
                f"Invalid arguments for tool {call.name!r}: {call.args.problem}. Nothing was "
                "run; send the arguments as one JSON object.",
                reason="invalid_arguments",
            )
        try:
            args = validate(tool.input_schema, call.args)
        except ArgumentError as exc:
            return ToolOutcome.error(
                f"Invalid arguments for tool {call.name!r}: {exc}. Nothing was run.",
                reason="invalid_arguments",
            )
        return PreparedCall(call, tool, args)

    async def invoke(self, prepared: PreparedCall, ctx: ToolContext) -> ToolOutcome:
        """Run a prepared call; an exception from the tool becomes an error result."""
        tool = prepared.tool
        try:
            outcome: object = await tool.run(prepared.args, ctx)
        except Exception as exc:  # a tool bug is reported to the model, not raised
            return ToolOutcome.error(
                f"Tool {tool.name!r} failed: {type(exc).__name__}: {exc}", reason="tool_crashed"
            )
        if not isinstance(outcome, ToolOutcome):
            return ToolOutcome.error(
                f"Tool {tool.name!r} returned {type(outcome).__name__}, not a result",
                reason="tool_crashed",
            )
        return outcome

    async def call(self, call: ToolCall, ctx: ToolContext) -> ToolOutcome:
        """Prepare and invoke one call (no deadline, no size budget: see ``run_batch``)."""
        prepared = self.prepare(call)
        if isinstance(prepared, ToolOutcome):
            return prepared
        return await self.invoke(prepared, ctx.for_call(call.id, call.name))


class ToolSnapshot(ToolRegistry):
    """A tool set that never changes: what a turn offers and runs (see the module).

    The tools are the callables themselves (an MCP tool whose server has gone
    answers that it is unavailable); ``register`` and ``unregister`` refuse.
    """

    def __init__(self, tools: Iterable[Tool] = (), specs: tuple[ToolSpec, ...] | None = None):
        # no super().__init__: it registers, which a snapshot refuses
        self._tools = {tool.name: tool for tool in tools}
        if specs is not None and [s.name for s in specs] != list(self._tools):
            raise ValueError("a snapshot's specs must name its tools, in order")
        self._specs = specs
        self._snapshot = self
        self._watchers = {}

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        raise TypeError(f"a tool snapshot cannot change: {tool.name!r} was not registered")

    def unregister(self, name: str) -> None:
        raise TypeError(f"a tool snapshot cannot change: {name!r} was not removed")

    def watch(self, key: object, notify: Callable[[], None]) -> None:
        pass  # it never changes

    def snapshot(self) -> ToolSnapshot:
        return self
