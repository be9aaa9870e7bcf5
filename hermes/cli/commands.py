"""One-shot commands for scripts: sessions, send, steer, stop, cancel, search, orphans, ps,
approve, tree."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from .app import call_daemon, daemon_endpoint, main, print_json, run_async
from .tables import on_terminal, print_table


@main.command("sessions")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--limit", default=50, show_default=True)
def sessions(as_json: bool, limit: int) -> None:
    """List sessions, most recent first."""
    rows = run_async(lambda: call_daemon("session.list", limit=limit))
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo("no sessions")
        return
    shown = [
        (row["id"], _session_state(row), row["messages"], _when(row["updated_at"]), row["title"])
        for row in rows
    ]
    if on_terminal():
        headers = ("ID", "STATE", "MSGS", "UPDATED", "TITLE")
        print_table(
            headers, [(*r[:4], r[4] or "") for r in shown], right=("MSGS",), wrap=("TITLE",)
        )
        return
    for sid, state, messages, when, title in shown:
        click.echo(f"{sid}  {state:7}  {messages:4} msgs  {when}  {title or ''}")


def _session_state(row: dict[str, Any]) -> str:
    if row["ended"]:
        return "ended"
    return "busy" if row["busy"] else ("running" if row["running"] else "idle")


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


@main.command("send")
@click.argument("text")
@click.option("--session", "session_id", default=None, help="Session id (default: a new one).")
@click.option("--mode", default=None, help="Busy mode for this prompt.")
@click.option("--no-wait", is_flag=True, help="Return once the prompt is accepted.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def send(text: str, session_id: str | None, mode: str | None, no_wait: bool, as_json: bool) -> None:
    """Send a prompt; print the reply (or, with --no-wait, how it was accepted)."""
    from hermes.gateway.client import connect

    async def go() -> Any:
        async with connect(daemon_endpoint()) as client:
            sid = session_id or (await client.call("session.create"))["id"]
            if not no_wait:
                await client.call("events.subscribe", session=sid)
            params: dict[str, Any] = {"session": sid, "text": text}
            if mode:
                params["mode"] = mode
            accepted = await client.request("prompt.submit", params)
            if no_wait:
                return {"session": sid, **accepted}
            end = await wait_turn(client, accepted, text, None)
            return {"session": sid, **end}

    result = run_async(go)
    if as_json or no_wait:
        print_json(result)
    else:
        click.echo(result.get("text", ""))
    if not no_wait and result.get("reason") not in ("completed", None):
        sys.exit(1)


async def wait_turn(
    client: Any,
    accepted: dict[str, Any],
    text: str,
    render: Callable[[dict[str, Any]], None] | None,
) -> dict[str, Any]:
    target = accepted.get("turn") if accepted.get("how") in ("started", "rolled_back") else None
    async for event in client.events:
        if render is not None:
            render(event)
        payload = event.get("payload") or {}
        if event["type"] == "turn.started" and target is None and payload.get("prompt") == text:
            target = payload.get("turn")
        if event["type"] == "turn.completed" and payload.get("turn") == target:
            return dict(payload)
    raise RuntimeError("the connection closed before the turn ended")


@main.command("cancel")
@click.argument("target")
def cancel(target: str) -> None:
    """Cancel a session's running turn (TARGET = session id) or any actor (TARGET = /path)."""
    if target.startswith("/"):
        result = run_async(lambda: call_daemon("actor.cancel", path=target))
        click.echo(f"cancelled {result['path']}: {result['reason']}")
    else:
        result = run_async(lambda: call_daemon("cancel", session=target))
        if result["cancelled"]:
            click.echo(f"cancelled turn {result['turn']} of {target}")
        else:
            click.echo(f"{target} was idle")


@main.command("steer")
@click.argument("session_id")
@click.argument("text")
def steer(session_id: str, text: str) -> None:
    """Steer the running turn of a session (or start one when idle)."""
    result = run_async(lambda: call_daemon("steer", session=session_id, text=text))
    click.echo(result["how"])


@main.command("stop")
@click.argument("session_id")
@click.option("--hard", is_flag=True, help="Cancel at once instead of a soft interrupt.")
def stop(session_id: str, hard: bool) -> None:
    """Interrupt (soft) or cancel (--hard) a session's running turn."""
    method = "cancel" if hard else "interrupt"
    result = run_async(lambda: call_daemon(method, session=session_id))
    click.echo(json.dumps(result))


@main.command("search")
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(query: str, as_json: bool) -> None:
    """Full-text search over every session."""
    hits = run_async(lambda: call_daemon("search", query=query))
    if as_json:
        print_json(hits)
        return
    if on_terminal():
        if not hits:
            click.echo(f"no matches for {query!r}")
            return
        rows = [(h["session_id"], h["seq"], h["role"], h["snippet"]) for h in hits]
        print_table(("SESSION", "SEQ", "ROLE", "SNIPPET"), rows, right=("SEQ",), wrap=("SNIPPET",))
        return
    for hit in hits:
        click.echo(f"{hit['session_id']} #{hit['seq']} {hit['role']}: {hit['snippet']}")


@main.command("orphans")
@click.option("--kill", "kill_them", is_flag=True, help="Kill them (fingerprint re-checked first).")
@click.option("--process", "process_id", default=None, help="Only this process id.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def orphans(kill_them: bool, process_id: str | None, as_json: bool) -> None:
    """Background processes a dead daemon left running; --kill kills them.

    A process whose pid now names another program is never signalled: it is
    marked lost. Asks the running daemon, which owns the store.
    """
    if kill_them:
        params = {} if process_id is None else {"process": process_id}
        rows = run_async(lambda: call_daemon("orphans.kill", **params))
    else:
        rows = run_async(lambda: call_daemon("orphans.list"))
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo("no orphaned background processes")
    elif on_terminal():
        shown = [
            (r["id"], r["pid"], r.get("action") or r.get("liveness"), r["command"]) for r in rows
        ]
        print_table(("ID", "PID", "STATE", "COMMAND"), shown, right=("PID",), wrap=("COMMAND",))
        return
    for row in rows:
        state = row.get("action") or row.get("liveness")
        click.echo(f"{row['id']}  pid {row['pid']}  {state}  {row['command'][:60]}")


@main.command("ps")
@click.option("--session", "session_id", default=None, help="Only this session's processes.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def ps(session_id: str | None, as_json: bool) -> None:
    """Background processes of every running session (or of one)."""
    params = {} if session_id is None else {"session": session_id}
    rows = run_async(lambda: call_daemon("process.list", **params))
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo("no background processes")
        return
    if on_terminal():
        shown = [
            (r["id"], r["session"], r["pid"], _status(r), f"{r['runtime']:.1f}s", r["command"])
            for r in rows
        ]
        headers = ("ID", "SESSION", "PID", "STATUS", "RUNTIME", "COMMAND")
        print_table(headers, shown, right=("PID", "RUNTIME"), wrap=("COMMAND",))
        return
    for row in rows:
        status = _status(row)
        click.echo(
            f"{row['id']}  {row['session']}  pid {row['pid']:<7}  {status:12}  "
            f"{row['runtime']:7.1f}s  {row['command'][:60]}"
        )


def _status(row: dict[str, Any]) -> str:
    code = row.get("exit_code")
    return str(row["status"]) if code is None else f"{row['status']}({code})"


@main.command("approve")
@click.argument("request_id", type=int)
@click.argument("choice", type=click.Choice(["once", "session", "always", "deny"]))
@click.option("--session", "session_id", required=True, help="The session that asked.")
def approve(request_id: int, choice: str, session_id: str) -> None:
    """Answer an approval request (the first answer from any client wins)."""
    run_async(
        lambda: call_daemon(
            "approval.respond", session=session_id, request_id=request_id, choice=choice
        )
    )
    click.echo(f"approval {request_id} of {session_id}: {choice}")


@main.command("tree")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--watch", is_flag=True, help="Redraw every --interval seconds until Ctrl+C.")
@click.option("--interval", default=1.0, show_default=True, help="Seconds between redraws.")
def tree(as_json: bool, watch: bool, interval: float) -> None:
    """The daemon's supervision tree: state, mailbox depth, heartbeat age, restarts."""
    if watch:
        sys.exit(run_async(lambda: _watch_tree(as_json, max(interval, 0.05))))
    snapshot = run_async(lambda: call_daemon("tree.snapshot"))
    if as_json:
        print_json(snapshot)
        return
    if on_terminal():
        print_table(*tree_table(snapshot), right=("MAILBOX", "BEAT", "RESTARTS"))
        return
    for line in render_tree(snapshot):
        click.echo(line)


async def _watch_tree(as_json: bool, interval: float) -> int:
    """One connection, a snapshot per interval; Ctrl+C (or SIGTERM) ends it with 0."""
    import signal

    import trio

    from hermes.gateway.client import connect

    live = on_terminal() and not as_json

    async def draw(client: Any) -> None:
        if live:
            await _draw_live(client, interval)
        while True:
            snapshot = await client.call("tree.snapshot")
            if as_json:
                click.echo(json.dumps(snapshot, ensure_ascii=False))
            else:
                stamp = time.strftime("%H:%M:%S")
                head = f"hermes tree  {stamp}  {snapshot.get('actors', '?')} actors"
                click.echo("\n".join([head, *render_tree(snapshot)]) + "\n")
            await trio.sleep(interval)

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with connect(daemon_endpoint()) as client, trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(stop_on_signal)
            await draw(client)
    return 0


async def _draw_live(client: Any, interval: float) -> None:
    """On a terminal: one table redrawn in place (``rich.live``) each interval."""
    import trio
    from rich.console import Console, Group
    from rich.live import Live
    from rich.text import Text

    from .tables import make_table

    console = Console(highlight=False)
    with Live(console=console, auto_refresh=False, vertical_overflow="ellipsis") as live:
        while True:
            snapshot = await client.call("tree.snapshot")
            head = f"hermes tree  {time.strftime('%H:%M:%S')}  {snapshot.get('actors', '?')} actors"
            headers, rows = tree_table(snapshot)
            table = make_table(headers, rows, right=("MAILBOX", "BEAT", "RESTARTS"))
            live.update(Group(Text(head, style="bold"), table), refresh=True)
            await trio.sleep(interval)


def tree_table(snapshot: dict[str, Any]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The tree as table headers and rows (each actor's name indented by its depth)."""
    headers = ("ACTOR", "CLASS", "STATE", "MAILBOX", "BEAT", "RESTARTS")
    rows: list[tuple[str, ...]] = []

    def walk(node: dict[str, Any], depth: int) -> None:
        age = node.get("heartbeat_age")
        rows.append(
            (
                "  " * depth + node.get("path", "?").rsplit("/", 1)[-1],
                str(node.get("class", "?")),
                str(node.get("state", "?")),
                str((node.get("mailbox") or {}).get("depth", 0)),
                f"{age:.1f}s" if isinstance(age, int | float) else "-",
                str(node.get("restarts", 0)),
            )
        )
        for child in node.get("children") or []:
            walk(child, depth + 1)

    for top in snapshot.get("children") or []:
        walk(top, 0)
    return headers, rows


def render_tree(snapshot: dict[str, Any]) -> list[str]:
    lines: list[str] = []

    def walk(node: dict[str, Any], depth: int) -> None:
        mailbox = node.get("mailbox") or {}
        age = node.get("heartbeat_age")
        age_text = f"{age:.1f}s" if isinstance(age, int | float) else "-"
        name = node.get("path", "?").rsplit("/", 1)[-1]
        lines.append(
            f"{'  ' * depth}{name}  [{node.get('class', '?')}] {node.get('state', '?')}"
            f"  mailbox {mailbox.get('depth', 0)}  beat {age_text}"
            f"  restarts {node.get('restarts', 0)}  {node.get('path', '')}"
        )
        for child in node.get("children") or []:
            walk(child, depth + 1)

    for top in snapshot.get("children") or []:
        walk(top, 0)
    return lines
