"""The slash commands of ``hermes chat``: one line of help each, and what they do."""

from __future__ import annotations

import contextlib
import difflib
import time
from typing import Any

import attrs

from hermes.daemon.config_schema import BUSY_MODES

from .chat_render import Renderer
from .chat_state import ChatState
from .commands import render_tree

COMMANDS: dict[str, str] = {
    "/help": "list these commands",
    "/new": "start a new session and switch to it",
    "/resume": "ID: switch to another session (Tab completes ids)",
    "/sessions": "list the sessions, newest first",
    "/steer": "TEXT: add guidance to the running turn",
    "/redirect": "TEXT: stop the turn's current plan and follow TEXT instead",
    "/stop": "interrupt the running turn (soft; also Ctrl+C)",
    "/busy": "[interrupt | queue | steer | reject | rollback]: what a line typed mid-turn does",
    "/cancel": "cancel the running turn at once (hard; Ctrl+C twice)",
    "/compress": "[FOCUS]: compact the context now",
    "/approve": "ID once|session|always|deny: answer an approval request",
    "/yolo": "[off]: skip (or restore) the dangerous-command list",
    "/tree": "the daemon's supervision tree",
    "/ps": "this session's background processes",
    "/usage": "model, tokens and context use",
    "/memory": "the long-term memory's usage",
    "/output": "[N]: the whole output of the Nth latest tool call (1 = latest)",
    "/checkpoints": "the checkpoints of this session's working directory (1 = latest)",
    "/rollback": "[N]: put the working directory back as checkpoint N left it (1)",
    "/learn": "[FOCUS]: have the agent write a skill from this session",
    "/refine": "[FOCUS]: a background review of the skills and memory now",
    "/goal": "[TEXT | status | pause | resume | clear | gate ...]: a standing goal",
    "/subgoal": "[TEXT | remove N | clear]: the goal's extra criteria",
    "/loop": "[INTERVAL] PROMPT [--times N] [--until COND] | status | pause | stop",
    "/quit": "leave (also /exit, Ctrl+D)",
}
SESSION_COMMANDS = frozenset({"/learn", "/refine", "/goal", "/subgoal", "/loop"})
"""Commands the session itself reads from the prompt (as it does a skill's ``/name``)."""
HINT_CUTOFF = 0.75
"""How alike a typed ``/word`` and a command must be for it to count as a typo of it:
anything less alike goes to the session, where a skill's name invokes the skill."""
ALIASES = {"/exit": "/quit"}


@attrs.define(kw_only=True)
class ChatContext:
    """What a command works with: the client, the state and the output."""

    client: Any
    state: ChatState
    out: Renderer
    sessions: list[tuple[str, str]] = attrs.Factory(list)
    """(id, title) of known sessions, for completion."""


def help_text() -> str:
    """Every command with its one line."""
    width = max(map(len, COMMANDS))
    lines = [f"{name.ljust(width)}  {line}" for name, line in COMMANDS.items()]
    lines.append(
        f"{'/NAME'.ljust(width)}  [ARGS]: any other /word goes to the session (a skill's name)"
    )
    return "\n".join(lines)


def closest(command: str) -> str | None:
    """The known command nearest to a mistyped one."""
    found = difflib.get_close_matches(command, [*COMMANDS, *ALIASES], n=1, cutoff=HINT_CUTOFF)
    return found[0] if found else None


async def refresh_sessions(ctx: ChatContext) -> list[dict[str, Any]]:
    """Fetch the session list (and keep ids and titles for completion)."""
    rows: list[dict[str, Any]] = await ctx.client.call("session.list")
    ctx.sessions = [(row["id"], row.get("title") or "") for row in rows]
    return rows


async def switch(ctx: ChatContext, session_id: str) -> None:
    """Follow another session: resubscribe, reset the counters."""
    from hermes.gateway.client import GatewayError

    old = ctx.state.session
    with contextlib.suppress(GatewayError):
        await ctx.client.call("events.unsubscribe", session=old)
    await ctx.client.call("events.subscribe", session=session_id, approvals=True)
    state = ctx.state
    state.session, state.turn, state.activity = session_id, None, ""
    state.tools.clear()
    state.approvals.clear()
    state.input_tokens = state.output_tokens = state.context_tokens = 0
    state.context_percent = 0.0
    ctx.out.note(f"session {session_id}")


async def submit(ctx: ChatContext, text: str) -> None:
    """Send a prompt; say what happened to it when a turn was running."""
    mode = {"mode": ctx.state.busy_mode} if ctx.state.busy_mode else {}
    answer = await ctx.client.call("prompt.submit", session=ctx.state.session, text=text, **mode)
    how = answer.get("how")
    if how == "queued":
        ctx.out.note(f"queued: runs after the current turn (position {answer.get('queued')})")
    elif how == "steered":
        ctx.out.note(f"sent to the running turn {answer.get('turn')} as a steer")
    elif how == "redirected":
        ctx.out.note(f"redirected turn {answer.get('turn')} with your message")
    elif how == "rolled_back":
        ctx.out.note(f"rolled back the running turn; yours runs as turn {answer.get('turn')}")
    elif how == "reviewing":
        ctx.out.note("a background review of the skills and memory started (/refine)")


async def run_line(ctx: ChatContext, text: str) -> bool:
    """Handle one typed line (a prompt or a slash command); True to quit."""
    if not text.startswith("/"):
        await submit(ctx, text)
        return False
    command, _, rest = text.partition(" ")
    command, rest = ALIASES.get(command, command), rest.strip()
    if command == "/quit":
        return True
    handler = _HANDLERS.get(command)
    if handler is None:
        near = None if command in SESSION_COMMANDS else closest(command)
        if near is not None:
            ctx.out.note(f"unknown command {command}: did you mean {near}? (/help lists them)")
        else:  # the session's: /learn, or a skill's /name (any other reaches the model as typed)
            await submit(ctx, text)
        return False
    await handler(ctx, rest)
    return False


async def _help(ctx: ChatContext, rest: str) -> None:
    keys = (
        "keys: Enter sends · Alt+Enter (or \\ then Enter) inserts a newline · Tab completes · "
        "Up/Down history · Esc clears the line\n"
        "      Ctrl+C interrupts a turn (twice within 1 s: cancel; three times: leave) · "
        "Ctrl+D leaves"
    )
    ctx.out.echo(help_text() + "\n" + keys)


async def _new(ctx: ChatContext, rest: str) -> None:
    created = await ctx.client.call("session.create", title=rest[:60] or None)
    await switch(ctx, created["id"])


async def _resume(ctx: ChatContext, rest: str) -> None:
    if not rest:
        rows = [r for r in await refresh_sessions(ctx) if r["id"] != ctx.state.session]
        if not rows:
            ctx.out.note("no other session to resume")
            return
        rest = rows[0]["id"]
    await ctx.client.call("session.resume", session=rest)
    await switch(ctx, rest)


async def _sessions(ctx: ChatContext, rest: str) -> None:
    for row in await refresh_sessions(ctx):
        mark = "*" if row["id"] == ctx.state.session else " "
        ctx.out.echo(f"{mark} {row['id']}  {row['messages']:>4} msgs  {row.get('title') or ''}")


async def _verb(ctx: ChatContext, method: str, **params: Any) -> Any:
    return await ctx.client.call(method, session=ctx.state.session, **params)


async def _steer(ctx: ChatContext, rest: str) -> None:
    answer = await _verb(ctx, "steer", text=rest)
    ctx.out.note(f"steer: {answer['how']}")


async def _redirect(ctx: ChatContext, rest: str) -> None:
    answer = await _verb(ctx, "redirect", text=rest)
    ctx.out.note(f"redirect: {answer['how']}")


async def _stop(ctx: ChatContext, rest: str) -> None:
    await _verb(ctx, "interrupt")


async def _busy(ctx: ChatContext, rest: str) -> None:
    """``/busy MODE``: the busy mode of the lines typed from now on (``/busy``: which)."""
    mode = rest.strip()
    if not mode:
        ctx.out.note(f"busy mode: {ctx.state.busy_mode or 'the session default'}")
    elif mode not in BUSY_MODES:
        ctx.out.note(f"busy mode {mode!r}: expected one of {', '.join(BUSY_MODES)}")
    else:
        ctx.state.busy_mode = mode
        ctx.out.note(f"busy mode: {mode}")


async def _cancel(ctx: ChatContext, rest: str) -> None:
    answer = await _verb(ctx, "cancel")
    ctx.out.note(f"cancelled turn {answer['turn']}" if answer["cancelled"] else "nothing ran")


async def _compress(ctx: ChatContext, rest: str) -> None:
    answer = await _verb(ctx, "session.compress", **({"focus": rest} if rest else {}))
    how = "now" if answer["how"] == "compacting" else "before the turn's next step"
    ctx.out.note(f"compacting the context {how}")


async def _approve(ctx: ChatContext, rest: str) -> None:
    request_id, _, choice = rest.partition(" ")
    if not request_id.isdigit():
        ctx.out.note("usage: /approve ID once|session|always|deny")
        return
    await _verb(ctx, "approval.respond", request_id=int(request_id), choice=choice or "once")


async def _yolo(ctx: ChatContext, rest: str) -> None:
    on = rest.lower() not in ("off", "no", "false", "0")
    answer = await _verb(ctx, "session.yolo", on=on)
    state = "on: dangerous commands run unasked" if answer["yolo"] else "off"
    ctx.out.note(f"yolo {state}; the hardline floor always holds")


async def _tree(ctx: ChatContext, rest: str) -> None:
    ctx.out.echo("\n".join(render_tree(await ctx.client.call("tree.snapshot"))))


async def _ps(ctx: ChatContext, rest: str) -> None:
    rows = await ctx.client.call("process.list", session=ctx.state.session)
    if not rows:
        ctx.out.note("no background processes")
    for row in rows:
        code = f" ({row['exit_code']})" if row.get("exit_code") is not None else ""
        ctx.out.echo(f"{row['id']}  {row['status']}{code}  {row['command']}")


async def _usage(ctx: ChatContext, rest: str) -> None:
    view = await _verb(ctx, "session.get")
    ctx.out.echo(
        f"{view.get('model') or ctx.state.model}: {view['input_tokens']:,} input and "
        f"{view['output_tokens']:,} output tokens; context {view['context_tokens']:,} tokens "
        f"({view['context_percent']:.0f}%), {view['messages']} messages"
    )


async def _memory(ctx: ChatContext, rest: str) -> None:
    shown = await ctx.client.call("memory.show")
    for kind in ("memory", "user"):
        part = shown[kind]
        ctx.out.echo(f"{kind}: {len(part['entries'])} entries, {part['used']:,}/{part['cap']:,}")
    if shown.get("pending"):
        ctx.out.echo(f"{shown['pending']} staged edit(s) wait: hermes memory pending")


async def _output(ctx: ChatContext, rest: str) -> None:
    outputs = ctx.state.last_outputs
    index = int(rest) if rest.isdigit() and int(rest) > 0 else 1
    if index > len(outputs):
        ctx.out.note(f"no tool output #{index} (this chat kept {len(outputs)})")
        return
    name, text = outputs[-index]
    ctx.out.echo(f"── {name} ──\n{text.rstrip() or '(no streamed output)'}")


async def _session_dir(ctx: ChatContext) -> str | None:
    """The session's working directory (the daemon's view), or None with a note."""
    cwd: str | None = (await _verb(ctx, "session.get")).get("cwd")
    if not cwd:
        ctx.out.note("this session is not running, so its working directory is unknown")
    return cwd


async def _checkpoints(ctx: ChatContext, rest: str) -> None:
    cwd = await _session_dir(ctx)
    if cwd is None:
        return
    rows = await ctx.client.call("checkpoint.list", dir=cwd)
    if not rows:
        ctx.out.note(f"no checkpoints of {cwd} yet")
        return
    ctx.out.echo(f"checkpoints of {cwd} (/rollback N restores one):")
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["when"]))
        ctx.out.echo(f"{row['number']:>3}  {row['commit'][:10]}  {when}  {row['reason']}")


async def _rollback(ctx: ChatContext, rest: str) -> None:
    if rest and not (rest.isdigit() and int(rest) > 0):
        ctx.out.note("usage: /rollback [N] (N = a number from /checkpoints; 1 = the latest)")
        return
    cwd = await _session_dir(ctx)
    if cwd is None:
        return
    number = int(rest) if rest else 1
    answer = await _verb(ctx, "checkpoint.restore", dir=cwd, number=number)
    restored = answer["restored"]
    ctx.out.note(
        f"restored {cwd} to checkpoint {number} ({restored['commit'][:10]}, {restored['reason']})"
    )
    if answer.get("saved"):
        ctx.out.note("what was there is saved as checkpoint 1: /rollback 1 undoes this")


_HANDLERS = {
    "/help": _help,
    "/new": _new,
    "/resume": _resume,
    "/sessions": _sessions,
    "/steer": _steer,
    "/redirect": _redirect,
    "/stop": _stop,
    "/busy": _busy,
    "/cancel": _cancel,
    "/compress": _compress,
    "/approve": _approve,
    "/yolo": _yolo,
    "/tree": _tree,
    "/ps": _ps,
    "/usage": _usage,
    "/memory": _memory,
    "/output": _output,
    "/checkpoints": _checkpoints,
    "/rollback": _rollback,
}
