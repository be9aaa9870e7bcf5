"""A server's live state, shared by its actor (the only writer) and its tools (readers).

The actor owns the connection; the tools read ``session`` to make their call
on it (the request and its cancellation go straight onto the connection the
actor holds, no mailbox hop), or, while it is down, answer with
``unavailable()``.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import attrs
import trio

from .config import ServerConfig

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

    from hermes.tools import ToolContext

STATES = ("starting", "ready", "down", "disabled", "stopped")


@attrs.define(slots=True, kw_only=True)
class ServerLink:
    """What is known of one server right now."""

    config: ServerConfig
    state: str = "starting"
    session: ClientSession | None = None
    """The initialized connection while ``state == "ready"``, else None."""
    reason: str = ""
    """Why it is down (or the last failure)."""
    retry_at: float | None = None
    """``trio.current_time()`` of the next connection attempt, while down."""
    tools: tuple[str, ...] = ()
    """The server's own names of the tools offered (after include/exclude)."""
    skipped: tuple[str, ...] = ()
    """Tools left out, each with why (a schema the model API would refuse, a name clash)."""
    pid: int | None = None
    """stdio: the server process (its group's id) while it runs."""
    last_pid: int | None = None
    """stdio: the most recent server process, kept after it ended."""
    attempts: int = 0
    connects: int = 0
    """Successful connections so far (a restart shows as 2 or more)."""
    last_error: str = ""
    last_error_at: float | None = None
    """Wall-clock time of ``last_error``."""
    server_name: str = ""
    server_version: str = ""
    calls: dict[str, ToolContext] = attrs.field(factory=dict)
    """Calls in flight on this server, by call id: whose person a server request goes to."""
    changed: trio.Event = attrs.field(factory=trio.Event)
    """Set (and replaced) whenever the state or the tool list changes; for tests and waiters."""

    @property
    def name(self) -> str:
        return self.config.name

    def _changed(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    def up(self, session: ClientSession) -> None:
        self.state, self.session, self.reason, self.retry_at = "ready", session, "", None
        self.connects += 1
        self._changed()

    def down(self, reason: str, retry_at: float | None) -> None:
        self.state, self.session, self.reason, self.retry_at = "down", None, reason, retry_at
        self.last_error, self.last_error_at = reason, time.time()
        self._changed()

    def stopped(self) -> None:
        if self.state != "disabled":
            self.state = "stopped"
        self.session, self.retry_at, self.pid = None, None, None
        self._changed()

    def disable(self) -> None:
        self.state, self.session, self.retry_at, self.pid = "disabled", None, None, None
        self.tools = ()
        self._changed()

    def enable(self) -> None:
        self.state, self.reason = "starting", ""
        self._changed()

    def set_tools(self, tools: tuple[str, ...], skipped: tuple[str, ...]) -> None:
        self.tools, self.skipped = tools, skipped
        self._changed()

    def unavailable(self) -> str:
        """The result a tool gives while its server is not connected."""
        name = self.config.name
        if self.state == "starting":
            return f"MCP server '{name}' is unavailable (still connecting); try again shortly."
        if self.state in ("stopped", "disabled"):
            return f"MCP server '{name}' is unavailable ({self.state})."
        reason = self.reason or "not connected"
        if self.retry_at is None:
            return f"MCP server '{name}' is unavailable ({reason})."
        wait = math.ceil(self.retry_at - trio.current_time())
        if wait <= 0:
            return f"MCP server '{name}' is unavailable ({reason}); reconnecting now."
        return f"MCP server '{name}' is unavailable ({reason}), retrying in {wait} s."

    def snapshot(self) -> dict[str, object]:
        """Plain data for listings (``hermes mcp list``, introspection)."""
        retry_in = (
            max(0.0, round(self.retry_at - trio.current_time(), 1))
            if self.retry_at is not None
            else None
        )
        return {
            "name": self.name,
            "transport": self.config.transport,
            "state": self.state,
            "pid": self.pid,
            "reason": self.reason,
            "retry_in": retry_in,
            "tools": list(self.tools),
            "skipped": list(self.skipped),
            "connects": self.connects,
            "last_error": self.last_error,
        }
