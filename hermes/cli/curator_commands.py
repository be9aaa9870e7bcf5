"""``hermes curator status|run|dismiss|lock|unlock``: the skills curator, from disk (no
daemon needed).

``run`` does one pass now (``hermes.skills.curator``) and records it, so the
daemon's scheduled curator waits a full interval from here; ``status`` shows
the schedule, the latest pass and the consolidations staged for the person,
each with its id for ``dismiss``.
"""

from __future__ import annotations

from typing import Any

import click

from .app import fail, main, print_json
from .skills_commands import library_and_config


def _policy() -> Any:
    from hermes.daemon.config import ConfigError, prepare
    from hermes.skills.curator import CuratorPolicy

    try:
        config, _ = prepare()
    except ConfigError as exc:
        fail(str(exc))
    return CuratorPolicy.from_config(config.get)


@main.group("curator")
def curator() -> None:
    """Skill upkeep: stale agent skills archived, near-duplicates proposed, locks."""


@curator.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool = False) -> None:
    """When the curator ran and runs next, what it did, and the staged proposals."""
    from hermes.skills.curator_state import dismissed_pairs, read_state
    from hermes.skills.usage import read_usage

    library, _ = library_and_config()
    policy = _policy()
    state = read_state(library.user_dir)
    usage = read_usage(library.user_dir)
    last = state.get("last_run")
    shown = {
        "enabled": policy.enabled,
        "interval_hours": policy.interval_hours,
        "last_run": last,
        "next_run": None if last is None else last + policy.interval,
        "last_report": (state.get("runs") or [None])[-1],
        "proposals": state.get("proposals", []),
        "dismissed": sorted(sorted(pair) for pair in dismissed_pairs(state)),
        "pending_renames": state.get("renames", {}),
        "stale": sorted(n for n, r in usage.items() if r.get("state") == "stale"),
        "locked": sorted(n for n, r in usage.items() if r.get("locked")),
    }
    if as_json:
        print_json(shown)
        return
    from datetime import datetime

    def when(t: Any) -> str:
        return "never" if t is None else datetime.fromtimestamp(t).isoformat(timespec="minutes")

    state_word = "enabled" if policy.enabled else "disabled ([curator] enabled = false)"
    click.echo(f"curator: {state_word}, every {policy.interval_hours:g} h")
    click.echo(f"last run: {when(last)}; next: {when(shown['next_run'])}")
    report = shown["last_report"]
    if report:
        archived = ", ".join(a["name"] for a in report["archived"]) or "none"
        click.echo(f"last pass archived: {archived}")
    click.echo(f"stale: {', '.join(shown['stale']) or 'none'}")
    click.echo(f"locked: {', '.join(shown['locked']) or 'none'}")
    for proposal in shown["proposals"]:
        click.echo(
            f"proposed: merge {proposal['merge']} into {proposal['keep']} ({proposal['why']}); "
            f"id {proposal['id']}"
        )


@curator.command("run")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def run(as_json: bool = False) -> None:
    """Run one pass now."""
    from hermes.skills.curator import curate

    library, _ = library_and_config()
    report = curate(library.user_dir, _policy())
    if as_json:
        print_json(report.plain())
        return
    click.echo(f"curator pass: {report.summary()}")
    for name, target in report.archived:
        click.echo(f"  archived {name} -> {target}")
    for name in report.stale:
        click.echo(f"  stale: {name}")
    for proposal in report.proposals:
        click.echo(
            f"  proposed: merge {proposal['merge']} into {proposal['keep']} (id {proposal['id']})"
        )
    for skill, old, new in report.rewritten:
        click.echo(f"  {skill}: {old} -> {new}")
    for why in report.skipped:
        click.echo(f"  left alone: {why}")


@curator.command("dismiss")
@click.argument("proposal_id")
def dismiss(proposal_id: str) -> None:
    """Drop a proposed consolidation (its id: hermes curator status); the pair is not
    proposed again while both skills exist."""
    from hermes.skills.curator_state import UnknownProposal
    from hermes.skills.curator_state import dismiss as dismiss_it

    library, _ = library_and_config()
    try:
        gone = dismiss_it(library.user_dir, proposal_id)
    except UnknownProposal as exc:
        fail(str(exc))
    click.echo(f"dismissed: merge {gone['merge']} into {gone['keep']}")


@curator.command("lock")
@click.argument("name")
def lock(name: str) -> None:
    """Lock a user skill: the agent's skill_manage refuses to change it, the curator skips it."""
    _lock(name, True)


@curator.command("unlock")
@click.argument("name")
def unlock(name: str) -> None:
    """Let the agent change the skill again."""
    _lock(name, False)


def _lock(name: str, locked: bool) -> None:
    from hermes.skills import SKILL_FILE
    from hermes.skills.usage import set_locked

    library, _ = library_and_config()
    if not (library.user_dir / name / SKILL_FILE).is_file():
        fail(f"no skill '{name}' in {library.user_dir} (only your own skills can be locked)")
    set_locked(library.user_dir, name, locked)
    click.echo(f"{name}: {'locked' if locked else 'unlocked'}")
