"""What ``hermes chat`` knows about its session while it runs, kept up to date from events.

The renderers and the prompt's toolbar read it; only the chat's trio thread writes it
(the prompt thread reads plain attributes, which is safe under the GIL).
"""

from __future__ import annotations

import time
from typing import Any

import attrs

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


@attrs.define(kw_only=True)
class ToolRun:
    """One tool call in flight: its name, when it started, the first lines it printed."""

    name: str
    started: float
    arguments: str = ""
    """The call's arguments in one short line (``tool.started``'s ``arguments``)."""
    head: list[str] = attrs.Factory(list)
    output: list[str] = attrs.Factory(list)
    chars: int = 0


@attrs.define(kw_only=True)
class ChatState:
    """The session, the running turn, tools, approvals, usage and the Ctrl+C clock."""

    session: str
    model: str = ""
    turn: int | None = None
    """The running turn (None: idle)."""
    turn_started: float = 0.0
    activity: str = ""
    tools: dict[str, ToolRun] = attrs.Factory(dict)
    subagents: dict[str, str] = attrs.Factory(dict)
    """Running subagent id -> what it does now."""
    approvals: list[dict[str, Any]] = attrs.Factory(list)
    """``approval.requested`` payloads not answered yet, oldest first."""
    input_tokens: int = 0
    output_tokens: int = 0
    context_tokens: int = 0
    context_percent: float = 0.0
    last_outputs: list[tuple[str, str]] = attrs.Factory(list)
    """(tool name, whole output) of the latest tool calls, newest last (for ``/output``)."""
    interrupts: list[float] = attrs.Factory(list)
    """When Ctrl+C was pressed during the current turn."""
    code: int = 0
    busy_mode: str | None = None
    """What a line typed mid-turn does (``/busy``); None: the session's own mode."""

    def apply(self, kind: str, payload: dict[str, Any]) -> None:
        """Update from one event (``type`` and ``payload`` of a frame)."""
        now = time.monotonic()
        if kind == "turn.started":
            self.turn, self.turn_started, self.activity = payload.get("turn"), now, "thinking"
            self.interrupts.clear()
        elif kind == "turn.completed":
            # ``interrupts`` stays: a press just after the turn ended still counts
            # (``pressed_lately``); the next turn's start clears them.
            self.turn, self.activity = None, ""
            self.tools.clear()
        elif kind in ("message.started", "thinking.delta"):
            self.activity = "thinking"
        elif kind == "text.delta":
            self.activity = "writing"
        elif kind == "tool.started":
            self.tools[payload["call_id"]] = ToolRun(
                name=payload["name"], started=now, arguments=payload.get("arguments") or ""
            )
            self.activity = f"running {payload['name']}"
        elif kind == "tool.output":
            run = self.tools.get(payload["call_id"])
            if run is not None:
                self._take_output(run, payload.get("text") or "")
        elif kind == "approval.requested":
            self.approvals.append(payload)
        elif kind == "approval.resolved":
            rid = payload.get("request_id")
            self.approvals = [a for a in self.approvals if a.get("request_id") != rid]
        elif kind == "usage.updated":
            total = payload.get("total") or {}
            self.input_tokens = (
                int(total.get("input_tokens", 0))
                + int(total.get("cache_read_input_tokens", 0))
                + int(total.get("cache_creation_input_tokens", 0))
            )
            self.output_tokens = int(total.get("output_tokens", 0))
            self.context_tokens = int(payload.get("context_tokens", 0))
            self.context_percent = float(payload.get("context_percent", 0.0))
        elif kind == "context.usage":
            self.context_tokens = int(payload.get("tokens", 0))
            self.context_percent = float(payload.get("percent", 0.0))
        elif kind in ("subagent.started", "subagent.queued"):
            self.subagents[payload["subagent_id"]] = payload.get("goal", "")[:60]
        elif kind == "subagent.progress":
            self.subagents[payload["subagent_id"]] = payload.get("activity") or ""
        elif kind == "subagent.finished":
            self.subagents.pop(payload["subagent_id"], None)

    def _take_output(self, run: ToolRun, text: str) -> None:
        run.chars += len(text)
        if run.chars <= 65_536:
            run.output.append(text)
        if len(run.head) < 4:
            lines = "".join(run.output).splitlines()
            run.head = lines[:4]

    def finish_tool(self, call_id: str) -> ToolRun | None:
        """Forget a finished call; keep its output for ``/output``."""
        run = self.tools.pop(call_id, None)
        if run is not None:
            self.last_outputs.append((run.name, "".join(run.output)))
            del self.last_outputs[:-20]
        if not self.tools and self.turn is not None:
            self.activity = "thinking"
        return run

    def live_line(self, now: float | None = None) -> str:
        """One line for the spinner: what the turn does now and for how long."""
        if self.turn is None:
            return ""
        now = time.monotonic() if now is None else now
        frame = SPINNER[int(now * 10) % len(SPINNER)]
        parts = [f"{frame} turn {self.turn}: {self.activity} {now - self.turn_started:.1f}s"]
        for run in self.tools.values():
            parts.append(f"{run.name} {now - run.started:.1f}s")
        if self.subagents:
            parts.append(f"{len(self.subagents)} subagent(s)")
        return " · ".join(parts)

    def subagent_lines(self, limit: int = 4) -> list[str]:
        """The running subagents as a compact tree under the turn, one line each."""
        items = list(self.subagents.items())
        lines = [
            f"  {'└' if i == len(items) - 1 else '├'} {sid}: {what}"
            for i, (sid, what) in enumerate(items[:limit])
        ]
        if len(items) > limit:
            lines.append(f"  … {len(items) - limit} more")
        return lines

    def status_line(self) -> str:
        """Model, context use and token counts."""
        bits = [self.model or "model ?"]
        if self.context_tokens:
            bits.append(f"context {self.context_percent:.0f}% ({self.context_tokens:,} tok)")
        if self.input_tokens or self.output_tokens:
            bits.append(f"in {self.input_tokens:,} / out {self.output_tokens:,} tok")
        return " · ".join(bits)

    def pressed_lately(self, now: float | None = None) -> bool:
        """A turn's Ctrl+C was pressed less than 1 s ago: the next press belongs to it,
        even when that turn ended in between (a quick double press cancels, not leaves)."""
        now = time.monotonic() if now is None else now
        return any(now - t < 1.0 for t in self.interrupts)

    def ctrl_c(self, now: float | None = None) -> str:
        """What a Ctrl+C during a turn does: ``interrupt``, ``cancel`` (a second within 1 s)
        or ``exit`` (a third)."""
        now = time.monotonic() if now is None else now
        self.interrupts = [t for t in self.interrupts if now - t < 2.0]
        self.interrupts.append(now)
        if len(self.interrupts) >= 3:
            return "exit"
        if len(self.interrupts) == 2 and now - self.interrupts[0] < 1.0:
            return "cancel"
        return "interrupt"
