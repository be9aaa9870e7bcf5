"""How ``hermes chat`` shows a session's events: plain lines for scripts, rich for people.

``PlainRenderer`` writes the reply's text to stdout as it streams and one bracketed
line per notable event to stderr (byte-stable, no escapes). ``RichRenderer`` renders
the reply as Markdown block by block (code highlighted), one line per finished tool
call with its first lines of output, approval requests as a panel, and leaves the
spinner and status line to a live area (the prompt's toolbar, or a ``rich.live.Live``
when there is no prompt).
"""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol, TextIO

import click

from .chat_state import ChatState

CHOICES = "[o]nce  [s]ession  [a]lways  [d]eny"


class Renderer(Protocol):
    """What the chat loop needs from an output mode."""

    def event(self, event: dict[str, Any]) -> None:
        """Show one event (the state was already updated from it)."""

    def note(self, text: str) -> None:
        """A short notice (the session, a command's answer, an error)."""

    def echo(self, text: str) -> None:
        """A command's output (tables, help), as is."""

    def close(self) -> None:
        """Flush and release the terminal."""


def context_note(kind: str, payload: dict[str, Any]) -> str | None:
    """A one-line note for compaction, memory-review, goal, loop and threat-scan events
    (None: nothing to show)."""
    if kind == "compaction.started":
        return f"\n[compacting the context ({payload['trigger']})...]"
    if kind == "compaction.completed":
        return (
            f"[compacted: {payload['messages_before']} -> {payload['messages_after']} messages, "
            f"~{payload['tokens_before']:,} -> {payload['tokens_after']:,} tokens; "
            f"{payload['detail']}]"
        )
    if kind == "goal.replied":
        return f"[{payload['output']}]"
    if kind in ("goal.updated", "loop.updated"):
        return f"\n[{payload['message']}]"
    if kind == "context.blocked":
        return (
            f"\n[{payload['effect']}: {payload['what']} ({payload['path']}): the threat scan "
            f"found {payload['finding']}; hermes skills scan shows more]"
        )
    if kind == "compaction.skipped":
        return f"[no compaction: {payload['reason']}]"
    if kind == "review.completed" and (payload["added"] or payload["staged"]):
        return (
            f"\n[memory review: {payload['added']} saved, {payload['staged']} waiting for "
            "approval (hermes memory pending)]"
        )
    return None


class PlainRenderer:
    """Text to stdout as it streams, bracketed notices to stderr: what scripts read."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out
        self.err = err

    def _err(self, text: str) -> None:
        click.echo(text, err=self.err is None, file=self.err)

    def event(self, event: dict[str, Any]) -> None:
        kind, payload = event["type"], event.get("payload") or {}
        if kind == "text.delta":
            click.echo(payload["text"], nl=False, file=self.out)
            (self.out or sys.stdout).flush()
        elif kind == "tool.started":
            self._err(f"\n[tool {payload['name']} {payload['call_id']}]")
        elif kind == "tool.completed":
            self._err(f"[tool {payload['name']}: {payload['status']}]")
        elif kind == "approval.requested":
            self._err(
                f"\n[approval {payload['request_id']}: {payload['command']} "
                f"({payload['reasons']}) - answer /approve {payload['request_id']} "
                "once|session|always|deny]"
            )
        elif kind == "error.occurred":
            self._err(f"\n[error: {payload['message']}]")
        elif kind == "message.completed" and payload.get("text"):
            click.echo("", file=self.out)
        elif kind == "turn.completed" and payload["reason"] != "completed":
            self._err(f"\n[turn {payload['turn']} {payload['reason']}]")
        elif kind == "events.dropped":
            self._err(f"\n[{payload.get('count')} events dropped]")
        else:
            note = context_note(kind, payload)
            if note:
                self._err(note)

    def note(self, text: str) -> None:
        self._err(f"[{text}]")

    def echo(self, text: str) -> None:
        click.echo(text, file=self.out)

    def close(self) -> None:
        (self.out or sys.stdout).flush()


class BlockSplitter:
    """Cuts streamed Markdown into finished blocks: after a blank line outside a code
    fence, or after the line that closes a fence. The rest waits for more text."""

    def __init__(self) -> None:
        self.pending = ""

    def feed(self, text: str) -> str:
        """Add ``text``; return the finished blocks ("" when none finished)."""
        self.pending += text
        cut, pos, fenced = 0, 0, False
        for line in self.pending.splitlines(keepends=True):
            if not line.endswith("\n"):
                break
            pos += len(line)
            stripped = line.strip()
            if stripped.startswith(("```", "~~~")):
                fenced = not fenced
                if not fenced:
                    cut = pos
            elif not stripped and not fenced:
                cut = pos
        done, self.pending = self.pending[:cut], self.pending[cut:]
        return done

    def flush(self) -> str:
        """Whatever is left, finished or not."""
        done, self.pending = self.pending, ""
        return done


class RichRenderer:
    """Markdown, tool lines and approval panels through a ``rich`` console."""

    def __init__(self, console: Any, state: ChatState, live: bool = False) -> None:
        from rich.live import Live

        self.console = console
        self.state = state
        self.blocks = BlockSplitter()
        self.live: Any = None
        if live:
            self.live = Live(
                _LiveArea(self), console=console, refresh_per_second=10, transient=True
            )
            self.live.start()

    @property
    def _out(self) -> Any:
        return self.live.console if self.live is not None else self.console

    def _markdown(self, text: str) -> None:
        from rich.markdown import Markdown

        if text.strip():
            self._out.print(Markdown(text, code_theme="monokai"))

    def _flush(self) -> None:
        self._markdown(self.blocks.flush())

    def event(self, event: dict[str, Any]) -> None:
        kind, payload = event["type"], event.get("payload") or {}
        if kind == "text.delta":
            self._markdown(self.blocks.feed(payload["text"]))
        elif kind in ("message.completed", "tool.started", "request.retried"):
            self._flush()
            if kind == "request.retried":
                self.note(f"retrying the model request ({payload['reason']})", "yellow")
        elif kind == "tool.completed":
            self._tool_done(payload)
        elif kind == "approval.requested":
            self._approval(payload)
        elif kind == "approval.resolved":
            self.note(f"approval {payload['request_id']}: {payload['choice']}")
        elif kind == "error.occurred":
            self.note(f"error: {payload['message']}", "bold red")
        elif kind == "turn.completed":
            self._flush()
            took = time.monotonic() - self.state.turn_started if self.state.turn_started else 0.0
            line = f"turn {payload['turn']} {payload['reason']} in {took:.1f}s"
            if payload["reason"] == "completed":
                self.note(f"── {line} · {self.state.status_line()}")
            else:
                detail = f": {payload['detail']}" if payload.get("detail") else ""
                self.note(f"── {line}{detail}", "yellow")
        elif kind == "input.queued":
            self.note(f"queued (position {payload['position']}): {payload['text'][:60]}")
        elif kind == "steer.delivered":
            self.note(f"steer delivered to turn {payload['turn']}")
        elif kind.startswith("subagent.") or kind == "delegation.completed":
            self._subagent(kind, payload)
        elif kind == "events.dropped":
            self.note(f"{payload.get('count')} events dropped", "yellow")
        elif kind == "daemon.stopping":
            self.note("the daemon is stopping", "yellow")
        else:
            note = context_note(kind, payload)
            if note:
                self.note(note.strip().strip("[]"))

    def _tool_done(self, payload: dict[str, Any]) -> None:
        from rich.text import Text

        run = self.state.finish_tool(payload["call_id"])
        took = f"{time.monotonic() - run.started:.1f}s" if run is not None else ""
        ok = not payload.get("is_error")
        line = Text()
        line.append("✓ " if ok else "✗ ", style="green" if ok else "red")
        line.append(payload["name"], style="bold")
        if run is not None and run.arguments:
            line.append(f" {run.arguments}")
        line.append(f"  {took}  {payload['status']}  {payload.get('chars', 0):,} chars", "dim")
        self._out.print(line)
        for text in (run.head if run is not None else [])[:3]:
            self._out.print(Text("  │ " + text[:160], style="dim"), overflow="ellipsis")

    def _approval(self, payload: dict[str, Any]) -> None:
        from rich.panel import Panel
        from rich.text import Text

        body = Text()
        body.append(payload["command"], style="bold")
        body.append(f"\n{payload['reasons']}\n", style="yellow")
        body.append(f"{CHOICES}   (or /approve {payload['request_id']} CHOICE)")
        title = f"approval {payload['request_id']}: run this command?"
        self._out.print(Panel(body, title=title, border_style="yellow", expand=False))

    def _subagent(self, kind: str, payload: dict[str, Any]) -> None:
        sid = payload.get("subagent_id", "")
        if kind == "subagent.started":
            self.note(f"↳ {sid} started: {payload['goal'][:70]}")
        elif kind == "subagent.queued":
            self.note(f"↳ {sid} queued at {payload['position']}: {payload['goal'][:60]}")
        elif kind == "subagent.finished":
            self.note(f"↳ {sid} {payload['status']} in {payload['duration']:.1f}s")
        elif kind == "delegation.completed":
            self.note(f"delegation {payload['delegation_id']}: {', '.join(payload['statuses'])}")

    def note(self, text: str, style: str = "dim") -> None:
        from rich.text import Text

        self._out.print(Text(text, style=style))

    def echo(self, text: str) -> None:
        from rich.text import Text

        self._out.print(Text(text))

    def close(self) -> None:
        self._flush()
        if self.live is not None:
            self.live.stop()
            self.live = None


class _LiveArea:
    """The live part under the reply when there is no prompt: the block being written,
    then the spinner line and the status line."""

    def __init__(self, renderer: RichRenderer) -> None:
        self.renderer = renderer

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.markdown import Markdown
        from rich.text import Text

        parts: list[Any] = []
        pending = self.renderer.blocks.pending
        if pending.strip():
            parts.append(Markdown(pending, code_theme="monokai"))
        line = self.renderer.state.live_line()
        if line:
            parts.append(Text(line, style="cyan"))
            parts.extend(Text(sub, style="cyan") for sub in self.renderer.state.subagent_lines())
            parts.append(Text(self.renderer.state.status_line(), style="dim"))
        return Group(*parts)
