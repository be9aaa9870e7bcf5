"""One-shot commands for scripts: sessions, send, steer, stop, cancel, search, orphans, tree."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from .app import call_daemon, daemon_endpoint, main, print_json, run_async


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
    for row in rows:
        state = (
            "ended"
            if row["ended"]
            else ("busy" if row["busy"] else ("running" if row["running"] else "idle"))
        )
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["updated_at"]))
        click.echo(
            f"{row['id']}  {state:7}  {row['messages']:4} msgs  {when}  {row['title'] or ''}"
        )


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
    for row in rows:
        state = row.get("action") or row.get("liveness")
        click.echo(f"{row['id']}  pid {row['pid']}  {state}  {row['command'][:60]}")


@main.command("tree")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def tree(as_json: bool) -> None:
    """The daemon's supervision tree: state, mailbox depth, heartbeat age, restarts."""
    snapshot = run_async(lambda: call_daemon("tree.snapshot"))
    if as_json:
        print_json(snapshot)
        return
    for line in render_tree(snapshot):
        click.echo(line)


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
