"""``Progress``: what a child is doing, read from its own session events.

The driver registers ``Progress.observe`` on the child's ``EventHub``, so
every event the child publishes updates the record in line (no task, no
buffer). The supervisor reads it to judge liveness: the time of the last
event, and whether a tool call is running (which allows a longer silence).
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from hermes.processes import ProcessInfo
from hermes.session import EventHub, SessionEvent
from hermes.session import events as ev

from .events import SubagentProgress

TRACE_LIMIT = 100
"""Tool calls kept in a child's trace (the count keeps going)."""


class Progress:
    """A child's latest iteration, current tool and activity, and its tool trace."""

    __slots__ = (
        "activity",
        "current_tool",
        "handed_over",
        "iteration",
        "last_progress",
        "notify",
        "session_id",
        "tool_calls",
        "tools_running",
        "trace",
    )

    def __init__(self, notify: Callable[[Progress], None] | None = None) -> None:
        self.iteration = 0
        self.current_tool: str | None = None
        self.activity = "starting"
        self.last_progress = trio.current_time()
        self.trace: list[str] = []
        """``name:status`` of each finished tool call, in order (at most ``TRACE_LIMIT``)."""
        self.tool_calls = 0
        self.tools_running = 0
        """Calls started and not yet completed (a parallel batch may run several)."""
        self.session_id: str | None = None
        self.handed_over: list[str] = []
        """Processes the child handed to its parent (ids, in order)."""
        self.notify = notify
        """Called (in line) when an iteration or a tool call starts."""

    @property
    def in_tool(self) -> bool:
        return self.tools_running > 0

    def touch(self, activity: str) -> None:
        self.activity = activity
        self.last_progress = trio.current_time()

    def handed(self, info: ProcessInfo) -> None:
        """The parent's registry took one of the child's processes (called in line)."""
        if info.id not in self.handed_over:
            self.handed_over.append(info.id)

    def observe(self, event: SessionEvent) -> None:
        """The child's hub calls this with each event it publishes."""
        payload = event.payload
        self.last_progress = trio.current_time()
        if isinstance(payload, ev.TextDelta | ev.ThinkingDelta | ev.ToolOutput):
            return  # streaming: alive, nothing new to say
        if isinstance(payload, ev.MessageStarted):
            self.iteration = payload.iteration + 1
            self.activity = f"model request (step {self.iteration})"
            self._notify()
        elif isinstance(payload, ev.ToolStarted):
            self.current_tool = payload.name
            self.tools_running += 1
            self.activity = f"running {payload.name}"
            self._notify()
        elif isinstance(payload, ev.ToolCompleted):
            self.tools_running = max(0, self.tools_running - 1)
            if not self.tools_running:
                self.current_tool = None
            self.tool_calls += 1
            self.activity = f"{payload.name} {payload.status}"
            if len(self.trace) < TRACE_LIMIT:
                self.trace.append(f"{payload.name}:{payload.status}")
        elif isinstance(payload, ev.MessageCompleted):
            self.activity = "reply received"
        elif isinstance(payload, ev.TurnCompleted):
            self.current_tool = None
            self.tools_running = 0
            self.activity = f"turn {payload.reason}"

    def _notify(self) -> None:
        if self.notify is not None:
            self.notify(self)


def hub_notifier(hub: EventHub, subagent_id: str) -> Callable[[Progress], None]:
    """A ``Progress.notify`` that publishes ``SubagentProgress`` on the parent's hub."""

    def notify(progress: Progress) -> None:
        hub.publish(
            SubagentProgress(
                subagent_id, progress.iteration, progress.current_tool, progress.activity
            )
        )

    return notify
