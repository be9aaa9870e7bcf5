"""``hermes goal SESSION [TEXT]`` and ``hermes loop SESSION [ARGS]``: a session's standing goal
and loop (docs/goals.md), in the same words as the ``/goal`` and ``/loop`` a prompt takes.

``hermes goal S "make the tests pass"`` sets a goal, ``hermes goal S`` shows it,
``hermes goal S pause|resume|clear``, ``hermes goal S gate add "make test"``,
``hermes goal S --turns 5 TEXT``; ``hermes subgoal S TEXT``; ``hermes loop S 5m check
the deploy --until it is green``, ``hermes loop S stop``. Each prints the daemon's
answer (``--json``, before SESSION: the goal and loop too).
"""

from __future__ import annotations

from typing import Any

import click

from .app import daemon_endpoint, main, print_json, run_async


def _run(word: str, session: str, words: tuple[str, ...], as_json: bool) -> None:
    from hermes.gateway.client import connect

    text = " ".join((word, *words))

    async def go() -> Any:
        async with connect(daemon_endpoint()) as client:
            return await client.call("goal.command", session=session, text=text)

    answer = run_async(go)
    if as_json:
        print_json(answer)
        return
    click.echo(answer["output"])
    if answer.get("turn") is not None:
        click.echo(f"(turn {answer['turn']} started)")


_SETTINGS = {"ignore_unknown_options": True, "allow_interspersed_args": False}


@main.command("goal", context_settings=_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("session")
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def goal(session: str, words: tuple[str, ...], as_json: bool) -> None:
    """A session's standing goal: TEXT sets it; status, pause, resume, clear, draft TEXT,
    --turns N TEXT, gate [add CMD | remove N | clear]."""
    _run("/goal", session, words, as_json)


@main.command("subgoal", context_settings=_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("session")
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def subgoal(session: str, words: tuple[str, ...], as_json: bool) -> None:
    """The goal's extra criteria: TEXT adds one; remove N, clear; none lists them."""
    _run("/subgoal", session, words, as_json)


@main.command("loop", context_settings=_SETTINGS)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("session")
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def loop(session: str, words: tuple[str, ...], as_json: bool) -> None:
    """A recurring wakeup: [every] [INTERVAL] PROMPT [--times N] [--until CONDITION];
    status, pause, resume, stop."""
    _run("/loop", session, words, as_json)
