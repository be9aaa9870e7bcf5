"""``hermes checkpoints [list|diff|restore]`` and ``hermes approvals [list|revoke]``.

Both work on local files, with or without a running daemon: the checkpoints'
shadow repositories in ``<data_dir>/checkpoints`` and the
``[approvals] command_allowlist`` of the config file. Everything heavy is
imported inside the commands (the CLI starts fast).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from .app import daemon_paths, fail, main


def _repo(directory: str) -> Any:
    from hermes.tools.checkpoint.shadow import ShadowRepo

    path = Path(directory).expanduser()
    if not path.is_dir():
        fail(f"{path} is not a directory")
    return ShadowRepo.for_dir(daemon_paths().data_dir / "checkpoints", path)


_DIR = click.option(
    "--dir",
    "directory",
    default=".",
    show_default=True,
    help="The working directory whose checkpoints these are.",
)


@main.group("checkpoints")
def checkpoints() -> None:
    """Snapshots taken before writes and destructive commands ([checkpoints] enabled)."""


@checkpoints.command("list")
@_DIR
def checkpoints_list(directory: str) -> None:
    """The directory's checkpoints, newest first (1 = the latest)."""
    from hermes.tools.checkpoint.shadow import age

    found = _repo(directory).list()
    if not found:
        where = os.path.realpath(directory)
        click.echo(f"no checkpoints of {where} (is [checkpoints] enabled in the config?)")
        return
    for number, checkpoint in enumerate(found, 1):
        click.echo(
            f"{number:>3}  {checkpoint.short}  {age(checkpoint.when):>10}  {checkpoint.reason}"
        )


@checkpoints.command("diff")
@click.argument("number", type=click.IntRange(min=1), default=1)
@_DIR
def checkpoints_diff(number: int, directory: str) -> None:
    """What changed in the directory since checkpoint NUMBER (default 1, the latest)."""
    from hermes.tools.checkpoint.shadow import CheckpointError

    try:
        click.echo(_repo(directory).diff(number), nl=False)
    except CheckpointError as exc:
        fail(str(exc))


@checkpoints.command("restore")
@click.argument("number", type=click.IntRange(min=1), default=1)
@_DIR
def checkpoints_restore(number: int, directory: str) -> None:
    """Put the directory back as checkpoint NUMBER left it (undo with: restore 1)."""
    from hermes.tools.checkpoint.shadow import CheckpointError

    try:
        target, before = _repo(directory).restore(number)
    except CheckpointError as exc:
        fail(str(exc))
    saved = f"; the state before is checkpoint 1 ({before.short})" if before else ""
    click.echo(f"restored {target.short} ({target.reason}){saved}")


@main.group("approvals")
def approvals() -> None:
    """Command approvals that last: the config file's [approvals] command_allowlist."""


def _allowlist() -> Any:
    from hermes.daemon.allowlist import AllowlistFile

    return AllowlistFile(daemon_paths().config_file)


@approvals.command("list")
def approvals_list() -> None:
    """Finding keys approved 'always' (they skip the prompt in every session)."""
    from hermes.tools.danger import DANGEROUS_RULES

    keys = sorted(_allowlist().current())
    if not keys:
        click.echo("no command approvals that last")
    for key in keys:
        click.echo(f"{key:<24} {DANGEROUS_RULES.get(key, '(not a known rule)')}")


@approvals.command("revoke")
@click.argument("keys", nargs=-1, required=True)
def approvals_revoke(keys: tuple[str, ...]) -> None:
    """Remove KEYS from the allowlist (running sessions keep what they approved themselves)."""
    from hermes.daemon.allowlist import AllowlistError

    try:
        removed = _allowlist().revoke(keys)
    except AllowlistError as exc:
        fail(str(exc))
    missing = sorted(set(keys) - removed)
    if removed:
        click.echo("revoked: " + ", ".join(sorted(removed)))
    if missing:
        fail("not in the allowlist: " + ", ".join(missing))
