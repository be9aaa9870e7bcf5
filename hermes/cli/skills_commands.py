"""``hermes skills [list|show|install|remove|trust|untrust|pending|approve|reject|scan]``.

All on disk (``scan``'s walk is ``skills_scan.py``).

These read the skill folders and the config file directly (no daemon needed):
the user's skills under the data directory, the bundled ones, and the
project's ``.hermes/skills`` when that project is trusted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .app import fail, main, print_json


def library_and_config() -> tuple[Any, Path]:
    """The skill places from the configuration, and the config file's path."""
    from hermes.daemon.config import ConfigError, prepare
    from hermes.skills import SkillLibrary

    try:
        config, paths = prepare()
    except ConfigError as exc:
        fail(str(exc))
    library = SkillLibrary(
        paths.data_dir / "skills",
        trusted_projects=tuple(config.get("skills", "trusted_projects")),
        pinned=tuple(config.get("skills", "pinned")),
        write_approval=config.get("skills", "write_approval"),
    )
    return library, paths.config_file


@main.group("skills", invoke_without_command=True)
@click.pass_context
def skills(ctx: click.Context) -> None:
    """Skills: know-how the agent loads when a task needs it; alone, lists them."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_skills)


@skills.command("list")
@click.option("--cwd", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_skills(cwd: Path = Path("."), as_json: bool = False) -> None:
    """The skills a session in CWD sees, and the ones skipped or quarantined, with why."""
    from hermes.skills.views import listing

    library, _ = library_and_config()
    if as_json:
        print_json(listing(library, cwd))
        return
    seen = library.look(cwd)
    click.echo(f"user skills: {library.user_dir}")
    for skill in seen.sorted():
        click.echo(f"  {skill.name:24} [{skill.source}] {skill.description}")
    if not seen.skills:
        click.echo("  (none)")
    for problem in seen.problems:
        click.echo(f"skipped: {problem}")
    for q in seen.quarantined:
        click.echo(f"quarantined: {q.name} ({q.directory}): {q.scan.reason()}")
    if seen.untrusted_project is not None:
        click.echo(
            f"not read: {seen.untrusted_project}/.hermes/skills (untrusted project; "
            f"hermes skills trust {seen.untrusted_project})"
        )


@skills.command("show")
@click.argument("name")
@click.option("--cwd", type=click.Path(file_okay=False, path_type=Path), default=".")
def show(name: str, cwd: Path = Path(".")) -> None:
    """A skill's body and supporting files, as skill_view gives it."""
    from hermes.skills.tool import view

    library, _ = library_and_config()
    outcome = view(library.look(cwd), name, None)
    if outcome.is_error:
        fail(outcome.content)
    click.echo(outcome.content)


@skills.command("install")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Install a skill the scan calls caution.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def install(path: Path, force: bool = False, as_json: bool = False) -> None:
    """Copy the skill folder PATH into your skills, after a threat scan.

    A skill from outside the bundled ones and trusted projects installs only when
    the scan finds nothing; --force installs one it calls caution, never dangerous.
    """
    from hermes.skills import SkillWriteError
    from hermes.skills.views import installed

    library, _ = library_and_config()
    try:
        done = installed(library, path, force=force)
    except SkillWriteError as exc:
        fail(str(exc))
    if as_json:
        print_json(done)
        return
    note = f"; scan: {done['verdict']}" + (" (forced)" if done["forced"] else "")
    click.echo(f"installed {done['name']} to {done['path']} ({done['trust']} source{note})")
    for finding in done["findings"]:
        click.echo(f"  finding: {finding}")


@skills.command("remove")
@click.argument("name")
def remove(name: str) -> None:
    """Archive your skill NAME (recoverable from <data_dir>/skills/.archive)."""
    from hermes.skills import SkillWriteError
    from hermes.skills.views import removed

    library, _ = library_and_config()
    try:
        done = removed(library, name)
    except SkillWriteError as exc:
        fail(str(exc))
    click.echo(f"{name}: archived to {done['archived_to']}")


@skills.command("trust")
@click.argument("project", type=click.Path(exists=True, file_okay=False, path_type=Path))
def trust(project: Path) -> None:
    """Read PROJECT's .hermes/skills from now on (each is still threat-scanned)."""
    _set(project, True)


@skills.command("untrust")
@click.argument("project", type=click.Path(file_okay=False, path_type=Path))
def untrust(project: Path) -> None:
    """Stop reading PROJECT's .hermes/skills."""
    _set(project, False)


def _set(project: Path, trusted: bool) -> None:
    from hermes.skills.trust import TrustError, set_trust

    _, config_file = library_and_config()
    try:
        root, changed = set_trust(config_file, project, trusted)
    except TrustError as exc:
        fail(str(exc))
    verb = "trusted" if trusted else "no longer trusted"
    state = "" if changed else " (already so)"
    click.echo(f"{root}: {verb}{state}; a running daemon applies it when it restarts")


@skills.command("pending")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def pending_changes(as_json: bool = False) -> None:
    """Skill changes staged for you ([skills] write_approval): id, origin, what they do."""
    from hermes.skills.pending import SkillChange, pending

    library, _ = library_and_config()
    records = pending(library.user_dir)
    if as_json:
        print_json(records)
        return
    if not records:
        click.echo("no staged skill changes")
    for record in records:
        change = SkillChange.from_plain(record)
        click.echo(f"{record['id']}  {change.describe()}  (from {record.get('origin', '?')})")


@skills.command("approve")
@click.argument("change_id")
def approve_change(change_id: str) -> None:
    """Write a staged skill change (every check is made again)."""
    _decide(change_id, approve=True)


@skills.command("reject")
@click.argument("change_id")
def reject_change(change_id: str) -> None:
    """Drop a staged skill change unwritten."""
    _decide(change_id, approve=False)


def _decide(change_id: str, *, approve: bool) -> None:
    from hermes.skills import SkillWriteError
    from hermes.skills.pending import approve as approve_it
    from hermes.skills.pending import reject

    library, _ = library_and_config()
    try:
        done = (approve_it if approve else reject)(library.user_dir, change_id)
    except SkillWriteError as exc:
        fail(f"{change_id}: {exc}")
    click.echo(f"{'approved' if approve else 'rejected'}: {done}")


@skills.command("scan")
@click.option("--cwd", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
def scan(paths: tuple[Path, ...], cwd: Path = Path("."), as_json: bool = False) -> None:
    """Why a file is BLOCKED: the threat scan of what a session in CWD puts in its prompt
    (SOUL.md, the context file, memory entries, project skills), or of PATHS.

    Exits 1 when something is dangerous (blocked, or quarantined)."""
    from hermes.daemon.config import prepare

    from .skills_scan import prompt_items, scan_paths

    library, _ = library_and_config()
    config, data = prepare()
    memory = bool(config.get("memory", "enabled"))
    items = scan_paths(paths) if paths else prompt_items(library, cwd, data.data_dir, memory=memory)
    if as_json:
        print_json(items)
    else:
        for item in items:
            click.echo(f"{item['verdict']:9} {item['what']}: {item['path']}  ({item['effect']})")
            for finding in item["findings"]:
                click.echo(f"          {finding}")
        if not items:
            click.echo("nothing to scan")
    if any(item["verdict"] == "dangerous" for item in items):
        raise SystemExit(1)
