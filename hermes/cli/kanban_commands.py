"""``hermes kanban add|list|show|edit|move|block|unblock|run|specify|decompose|remove``
(the board, docs/kanban.md)."""

from __future__ import annotations

from typing import Any

import click

from .app import main, print_json, run_async
from .cron_commands import call_daemon


def _line(card: dict[str, Any]) -> str:
    flags = " [goal]" if card["goal"] else ""
    waits = f"  after {', '.join(card['depends'])}" if card["depends"] else ""
    why = f"  ({card['block_reason']})" if card["status"] == "blocked" else ""
    return f"{card['id']}  {card['status']:8} {card['title']}{flags}{waits}{why}"


def _show(card: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(card)
    else:
        click.echo(_line(card))


@main.group("kanban")
def kanban() -> None:
    """The kanban board: each todo card is run by an unattended worker session."""


@kanban.command("add")
@click.argument("title")
@click.option("--body", default=None, help="The card's spec (what the worker is asked).")
@click.option("--triage", is_flag=True, help="Add it to triage (specify or decompose it first).")
@click.option("--goal", is_flag=True, help="Goal mode: a judge decides after each round.")
@click.option("--after", "depends", multiple=True, help="A card that must be done first.")
@click.option("--parent", default=None, help="The card this one was split from.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def add(
    title: str,
    body: str | None,
    triage: bool,
    goal: bool,
    depends: tuple[str, ...],
    parent: str | None,
    as_json: bool,
) -> None:
    """Add a card."""
    params: dict[str, Any] = {"title": title, "status": "triage" if triage else "todo"}
    if body is not None:
        params["body"] = body
    if goal:
        params["goal"] = True
    if depends:
        params["depends"] = list(depends)
    if parent is not None:
        params["parent"] = parent
    _show(run_async(lambda: call_daemon("kanban.add", **params)), as_json)


@kanban.command("list")
@click.option("--status", default=None, help="Only cards in this status.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cards(status: str | None, as_json: bool) -> None:
    """Every card with its status."""
    params = {} if status is None else {"status": status}
    cards: list[dict[str, Any]] = run_async(lambda: call_daemon("kanban.list", **params))
    if as_json:
        print_json(cards)
        return
    if not cards:
        click.echo("no kanban cards")
    for card in cards:
        click.echo(_line(card))


@kanban.command("show")
@click.argument("card")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(card: str, as_json: bool) -> None:
    """One card in full."""
    found = run_async(lambda: call_daemon("kanban.get", card=card))
    if as_json:
        print_json(found)
        return
    click.echo(_line(found))
    for key in ("assignee", "parent", "result", "block_reason"):
        if found.get(key):
            click.echo(f"  {key}: {found[key]}")
    if found["children"]:
        click.echo(f"  children: {', '.join(found['children'])}")
    if found["body"]:
        click.echo("")
        click.echo(found["body"])


@kanban.command("edit")
@click.argument("card")
@click.option("--title", default=None)
@click.option("--body", default=None)
@click.option("--goal/--no-goal", default=None)
@click.option("--after", "depends", multiple=True, help="Replace the cards it waits for.")
def edit(
    card: str, title: str | None, body: str | None, goal: bool | None, depends: tuple[str, ...]
) -> None:
    """Change a card's title, body, goal mode or dependencies."""
    params: dict[str, Any] = {"card": card}
    extra = {"title": title, "body": body, "goal": goal}
    params.update({k: v for k, v in extra.items() if v is not None})
    if depends:
        params["depends"] = list(depends)
    _show(run_async(lambda: call_daemon("kanban.edit", **params)), False)


@kanban.command("move")
@click.argument("card")
@click.argument("status")
def move(card: str, status: str) -> None:
    """Move a card to STATUS (triage, todo, review, blocked, done)."""
    _show(run_async(lambda: call_daemon("kanban.move", card=card, status=status)), False)


@kanban.command("block")
@click.argument("card")
@click.argument("reason")
def block(card: str, reason: str) -> None:
    """Block a card with a reason (its running worker is stopped)."""
    _show(run_async(lambda: call_daemon("kanban.block", card=card, reason=reason)), False)


def _one(verb: str, method: str, summary: str) -> None:
    @click.argument("card")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    def command(card: str, as_json: bool) -> None:
        answer = run_async(lambda: call_daemon(method, card=card))
        if as_json:
            print_json(answer)
        elif isinstance(answer, list):
            for found in answer:
                click.echo(_line(found))
        elif "removed" in answer:
            stopped = " (its worker was stopped)" if answer["run_stopped"] else ""
            click.echo(f"removed {answer['removed']}{stopped}")
        else:
            click.echo(_line(answer))

    command.__doc__ = summary
    kanban.command(verb)(command)


_one("unblock", "kanban.unblock", "Send a blocked card back to todo.")
_one("run", "kanban.run", "Start a todo card's worker now.")
_one("specify", "kanban.specify", "Have the auxiliary model spec a triage card (then todo).")
_one("decompose", "kanban.decompose", "Have the auxiliary model split a triage card.")
_one("remove", "kanban.rm", "Remove a card (its running worker is stopped).")
