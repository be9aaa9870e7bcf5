"""When checkpoints are taken, and the one object a session's tools and commands reach.

A session with checkpoints on puts a ``CheckpointService`` in its tool
context's services (off by default: no service, no checkpoint). Then:

- before the **first write of a turn** to a working directory (``write_file``,
  ``patch``), the directory is snapshotted once (a turn is recognised by its
  interrupt event: every turn's context has its own);
- before a **destructive terminal command** (``is_destructive``: ``rm``,
  ``mv``, ``cp``, ``sed -i``, ``dd``, ``truncate``, an overwriting ``>``, ``git
  reset/checkout/clean/restore/stash``...), every time (a snapshot of an
  unchanged directory adds nothing).

A checkpoint error is logged and the action runs anyway, as in Hermes: a
checkpoint is a safety net, not a gate. Which directory: the session's working
directory when the path is inside it, else the nearest ancestor holding a
``.git`` (a path in neither is not snapshotted: ``/tmp/x`` would mean all of
``/tmp``); never ``/`` or the home directory itself.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import trio

from ..shell import parse
from ..wrappers import short_flag, split_options, strip_wrappers
from .shadow import Checkpoint, CheckpointError, ShadowRepo

if TYPE_CHECKING:
    from ..context import ToolContext

log = logging.getLogger("hermes.tools.checkpoints")


@attrs.define(slots=True, kw_only=True)
class CheckpointService:
    """Checkpoints of the directories one session works in (see the module docstring)."""

    root: Path
    """Where the shadow repositories live: ``<data_dir>/checkpoints``."""
    max_files: int = 50_000
    max_file_bytes: int = 20_000_000
    keep: int = 50
    timeout: float = 60.0
    _turn: object | None = attrs.field(default=None, init=False)
    _done: set[str] = attrs.field(factory=set, init=False)
    _locks: dict[str, trio.Lock] = attrs.field(factory=dict, init=False)

    def repo(self, workdir: Path) -> ShadowRepo:
        return ShadowRepo.for_dir(
            self.root,
            workdir,
            max_files=self.max_files,
            max_file_bytes=self.max_file_bytes,
            keep=self.keep,
            timeout=self.timeout,
        )

    async def before_write(self, ctx: ToolContext, path: Path) -> Checkpoint | None:
        """The turn's first write to ``path``'s directory: snapshot it (errors logged)."""
        directory = await trio.to_thread.run_sync(working_dir, path, ctx.cwd)
        if directory is None:
            return None
        turn = ctx.interrupt if ctx.interrupt is not None else ctx.call_id
        if turn is not self._turn:
            self._turn, self._done = turn, set()
        key = str(directory)
        async with self._lock(key):
            if key in self._done:
                return None
            made = await self._snapshot(directory, f"before {ctx.tool_name} {path}")
            self._done.add(key)
            return made

    async def before_command(
        self, ctx: ToolContext, workdir: Path, command: str
    ) -> Checkpoint | None:
        """Before a destructive command: snapshot its directory (errors logged)."""
        directory = await trio.to_thread.run_sync(working_dir, workdir / ".", ctx.cwd)
        if directory is None:
            return None
        async with self._lock(str(directory)):
            short = " ".join(command.split())[:120]
            return await self._snapshot(directory, f"before terminal: {short}")

    async def list(self, workdir: Path) -> list[Checkpoint]:
        return await trio.to_thread.run_sync(self.repo(workdir).list)

    async def diff(self, workdir: Path, number: int = 1) -> str:
        """What changed since checkpoint ``number`` (1 = latest)."""
        repo = await trio.to_thread.run_sync(self.repo, workdir)
        async with self._lock(str(repo.workdir)):
            return await trio.to_thread.run_sync(repo.diff, number)

    async def restore(self, workdir: Path, number: int = 1) -> tuple[Checkpoint, Checkpoint | None]:
        """Restore checkpoint ``number`` (1 = latest); the present is checkpointed first."""
        repo = await trio.to_thread.run_sync(self.repo, workdir)
        async with self._lock(str(repo.workdir)):
            return await trio.to_thread.run_sync(repo.restore, number)

    def _lock(self, key: str) -> trio.Lock:
        return self._locks.setdefault(key, trio.Lock())

    async def _snapshot(self, directory: Path, reason: str) -> Checkpoint | None:
        repo = self.repo(directory)
        try:
            return await trio.to_thread.run_sync(repo.snapshot, reason)
        except CheckpointError as exc:
            log.warning("checkpoint of %s skipped: %s", directory, exc)
        except OSError as exc:
            log.warning("checkpoint of %s failed: %s", directory, exc)
        return None


def working_dir(path: Path, cwd: Path) -> Path | None:
    """The directory a write to ``path`` checkpoints (blocking; see the module docstring)."""
    real = Path(os.path.realpath(path))
    base = Path(os.path.realpath(cwd))
    home = Path(os.path.realpath(os.path.expanduser("~")))
    if real == base or base in real.parents:
        found: Path | None = base
    else:  # outside the session's directory: only a git project is snapshotted
        start = real if real.is_dir() else real.parent
        found = next((d for d in (start, *start.parents) if (d / ".git").exists()), None)
    if found is None or found == Path("/") or found == home or not found.is_dir():
        return None
    return found


_DESTROYERS = frozenset({"rm", "rmdir", "unlink", "shred", "mv", "cp", "dd", "truncate"})
_GIT_DESTROYERS = frozenset(
    {"reset", "checkout", "clean", "restore", "stash", "rebase", "merge", "pull", "switch", "am"}
)
_OVERWRITES = frozenset({">", ">|", "&>"})


def is_destructive(command: str) -> bool:
    """True when the command can destroy file content a checkpoint should keep."""
    try:
        script = parse(command)
    except RecursionError:
        return True
    for redirect in script.redirects:
        if redirect.op in _OVERWRITES and not redirect.target.text.startswith("/dev/"):
            return True
    for cmd in script.commands:
        words = strip_wrappers([w.text for w in cmd.words])
        if not words:
            continue
        name = os.path.basename(words[0])
        options, operands = split_options(words[1:])
        if name in _DESTROYERS:
            return True
        if name == "sed" and short_flag(options, "i", "--in-place"):
            return True
        if name == "git" and any(op in _GIT_DESTROYERS for op in operands[:2]):
            return True
        if name == "find" and "-delete" in words:
            return True
        if name == "rsync" and any(o.startswith("--delete") for o in options):
            return True
        if name == "tee" and not short_flag(options, "a", "--append"):
            return True
    return False


async def checkpoint_before_write(ctx: ToolContext, path: Path) -> None:
    """The file tools' hook: a no-op unless the context has a ``CheckpointService``."""
    service = ctx.services.get(CheckpointService)
    if isinstance(service, CheckpointService):
        await service.before_write(ctx, path)


async def checkpoint_before_command(ctx: ToolContext, workdir: Path, command: str) -> None:
    """The terminal's hook: snapshot before a destructive command, when checkpoints are on."""
    service = ctx.services.get(CheckpointService)
    if isinstance(service, CheckpointService) and is_destructive(command):
        await service.before_command(ctx, workdir, command)
