"""``hermes memory ...`` (long-term memory and the edits reviews staged) and ``hermes compress``."""

from __future__ import annotations

from typing import Any

import click

from .app import call_daemon, main, print_json, run_async
from .tables import on_terminal, print_table


@main.group("memory", invoke_without_command=True)
@click.pass_context
def memory(ctx: click.Context) -> None:
    """Long-term memory (MEMORY.md, USER.md); `hermes memory` alone shows it."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(show)


@memory.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(as_json: bool = False) -> None:
    """Both stores with their usage, and how many edits wait for approval."""
    shown = run_async(lambda: call_daemon("memory.show"))
    if as_json:
        print_json(shown)
        return
    for kind, title in (("memory", "Agent notes"), ("user", "User profile")):
        store = shown[kind]
        if on_terminal():
            head = f"{title} ({store['file']}, {store['used']:,}/{store['cap']:,} chars)"
            rows = [(str(n), e) for n, e in enumerate(store["entries"], 1)] or [("", "(empty)")]
            click.echo(head)
            print_table(("#", "ENTRY"), rows, right=("#",), wrap=("ENTRY",))
            continue
        click.echo(f"{title} ({store['file']}, {store['used']:,}/{store['cap']:,} chars)")
        for entry in store["entries"] or ["(empty)"]:
            click.echo("  - " + entry.replace("\n", "\n    "))
    if shown["pending"]:
        click.echo(f"{shown['pending']} edit(s) wait for approval: hermes memory pending")


@memory.command("pending")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def pending(as_json: bool) -> None:
    """Replacements and removals proposed by background reviews."""
    rows: list[dict[str, Any]] = run_async(lambda: call_daemon("memory.pending"))
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo("no pending memory edits")
    elif on_terminal():
        shown = [
            (r["id"], r["op"], r["kind"], r["entry"], r["text"] if r["op"] == "replace" else "")
            for r in rows
        ]
        print_table(("ID", "OP", "KIND", "ENTRY", "NEW TEXT"), shown, wrap=("ENTRY", "NEW TEXT"))
        return
    for row in rows:
        change = f"-> {row['text']!r}" if row["op"] == "replace" else "(remove)"
        click.echo(f"{row['id']}  {row['op']:7} {row['kind']:6} {row['entry']!r} {change}")


@memory.command("approve")
@click.argument("proposal")
def approve(proposal: str) -> None:
    """Apply a pending edit."""
    change = run_async(lambda: call_daemon("memory.approve", proposal=proposal))
    click.echo(f"{proposal}: applied ({change['used']:,}/{change['cap']:,} chars used)")


@memory.command("reject")
@click.argument("proposal")
def reject(proposal: str) -> None:
    """Drop a pending edit."""
    run_async(lambda: call_daemon("memory.reject", proposal=proposal))
    click.echo(f"{proposal}: rejected")


@main.command("compress")
@click.argument("session_id")
@click.option("--focus", default=None, help="What the summary should keep in detail.")
def compress(session_id: str, focus: str | None) -> None:
    """Compact a session's context now (or before its running turn's next step)."""
    params: dict[str, Any] = {"session": session_id}
    if focus:
        params["focus"] = focus
    answer = run_async(lambda: call_daemon("session.compress", **params))
    if answer["how"] == "compacting":
        click.echo(f"{session_id}: compacting (turn {answer['turn']}; see its events)")
    else:
        click.echo(f"{session_id}: will compact before the running turn's next step")
