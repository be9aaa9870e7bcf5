"""A session's own view of the shared tool registry: the MCP servers it turned off left out.

Every session reads the daemon's one ``ToolRegistry`` (MCP servers add and
remove their tools there at run time). ``SessionTools`` is that registry as
one session sees it: the tools of the MCP servers named in ``off`` are
hidden (a tool's server is its ``mcp_server`` attribute). With nothing off,
``specs()`` is the shared registry's own tuple, so the tool list a request
sends is the very one every other session sends; otherwise it is rebuilt
only when the shared registry or the set changes, so it stays the same
tuple (and the same bytes) between changes.

Only the session reads it. A turn gets ``snapshot()``, a ``ToolSnapshot``
(the same object until the view changes), and each later one as a
``ToolsChanged`` message; the session learns of a change of the shared
registry by ``watch`` (``RegistryChanged`` in its mailbox, ``registry_sink``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import attrs

from actors import ActorRef, MailboxFull
from hermes.model.types import ToolSpec
from hermes.tools import Tool, ToolRegistry, ToolSnapshot

log = logging.getLogger(__name__)


@attrs.frozen(slots=True)
class RegistryChanged:
    """Cast to a session when the shared registry's tool set changed (once per burst)."""


def registry_sink(session: ActorRef, session_id: str) -> Callable[[], None]:
    """Called in the task that changed the registry: tell the session's mailbox."""

    def notify() -> None:
        try:
            session.cast_nowait(RegistryChanged())
        except MailboxFull:  # its next turn looks again (``TurnOwner._sync_tools``)
            log.warning("session %s: mailbox full, a tool list change waits", session_id)

    return notify


def mcp_server_of(tool: Tool) -> str | None:
    """The MCP server a tool belongs to, or None for every other tool."""
    server = getattr(tool, "mcp_server", None)
    return server if isinstance(server, str) else None


class SessionTools(ToolRegistry):
    """``base`` minus the tools of the MCP servers in ``off`` (read live; see the module)."""

    def __init__(self, base: ToolRegistry) -> None:  # no super().__init__: nothing of its own
        self.base = base
        self.off: frozenset[str] = frozenset()
        """Names of the MCP servers this session turned off."""
        self._seen: tuple[tuple[ToolSpec, ...], frozenset[str]] | None = None
        self._view: dict[str, Tool] = {}
        self._view_specs: tuple[ToolSpec, ...] = ()
        self._snap: ToolSnapshot | None = None

    def set_server(self, name: str, on: bool) -> bool:
        """Turn server ``name``'s tools on or off for this session; whether the set changed."""
        off = self.off - {name} if on else self.off | {name}
        changed = off != self.off
        self.off = off
        return changed

    def _refresh(self) -> None:
        base_specs = self.base.specs()  # the same tuple until the shared set changes
        if self._seen is not None and self._seen[0] is base_specs and self._seen[1] == self.off:
            return
        self._seen = (base_specs, self.off)
        pairs = [
            (tool, spec)
            for tool, spec in zip(self.base, base_specs, strict=True)
            if mcp_server_of(tool) not in self.off
        ]
        self._view = {tool.name: tool for tool, _ in pairs}
        if len(pairs) == len(base_specs):
            self._view_specs = base_specs
        else:
            self._view_specs = tuple(spec for _, spec in pairs)

    @property
    def _tools(self) -> dict[str, Tool]:  # what every inherited method reads
        if not self.off:
            return self.base._tools
        self._refresh()
        return self._view

    @_tools.setter
    def _tools(self, value: dict[str, Tool]) -> None:
        raise AttributeError("a session's view has no tools of its own: register on the base")

    def specs(self) -> tuple[ToolSpec, ...]:
        if not self.off:
            return self.base.specs()
        self._refresh()
        return self._view_specs

    def snapshot(self) -> ToolSnapshot:
        """The view as it is now, as a value (the same object until it changes)."""
        if not self.off:
            return self.base.snapshot()
        self._refresh()
        if self._snap is None or self._snap.specs() is not self._view_specs:
            self._snap = ToolSnapshot(self._view.values(), self._view_specs)
        return self._snap

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        self.base.register(tool, replace=replace)

    def unregister(self, name: str) -> None:
        self.base.unregister(name)

    def watch(self, key: object, notify: Callable[[], None]) -> None:
        self.base.watch(key, notify)

    def unwatch(self, key: object) -> None:
        self.base.unwatch(key)

    def subset(
        self, names: Iterable[str] | None = None, *, toolsets: Iterable[str] | None = None
    ) -> ToolRegistry:
        wanted, sets = set(names or ()), set(toolsets or ())
        return ToolRegistry(t for t in self if t.name in wanted or t.toolset in sets)
