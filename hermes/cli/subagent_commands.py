"""``hermes subagents pause|resume|status``: the daemon-wide subagent spawn pause.

While paused, every new ``delegate_task`` is refused with a clear reason;
running children go on. The pause lasts until ``resume`` or the daemon stops.
"""

from __future__ import annotations

import click

from .app import call_daemon, main, print_json, run_async


@main.group("subagents")
def subagents() -> None:
    """Pause or resume the spawning of subagents, daemon-wide."""


def _show(method: str, as_json: bool) -> None:
    answer = run_async(lambda: call_daemon(method))
    if as_json:
        print_json(answer)
    else:
        click.echo("subagent spawning is " + ("paused" if answer["paused"] else "allowed"))


@subagents.command("pause")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def pause(as_json: bool = False) -> None:
    """Refuse new delegations in every session (running children go on)."""
    _show("subagents.pause", as_json)


@subagents.command("resume")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def resume(as_json: bool = False) -> None:
    """Allow delegations again."""
    _show("subagents.resume", as_json)


@subagents.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool = False) -> None:
    """Whether spawning is paused."""
    _show("subagents.status", as_json)
