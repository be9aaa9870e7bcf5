"""A working directory's snapshots in a shadow git repository (never the project's ``.git``).

Each directory gets its own bare-style repository under the checkpoint root,
named by a hash of its real path; git runs with ``GIT_DIR`` there and
``GIT_WORK_TREE`` at the directory, so the project's own ``.git`` (and any
nested one) is never read, written or snapshotted. The project's
``.gitignore`` files apply as they would to the project, plus a fixed list of
build and cache folders (``node_modules/``, ``.venv/``, ``__pycache__/``...);
files over ``max_file_bytes`` are left out (listed in the checkpoint's
message); a directory with more than ``max_files`` files is not snapshotted
at all. Blocking: run from a worker thread.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import attrs

DEFAULT_EXCLUDES = (
    ".git/",
    "node_modules/",
    ".venv/",
    "venv/",
    "__pycache__/",
    "*.pyc",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    ".cache/",
    "dist/",
    "target/",
    ".next/",
    ".env",
    ".env.*",
    "!.env.example",
)
"""Never snapshotted, whatever the project's own ignore files say (secrets and bulk)."""

_PRUNED = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".cache"})


class CheckpointError(Exception):
    """Git failed, or the directory cannot be snapshotted (with the reason)."""


@attrs.frozen(slots=True)
class Checkpoint:
    """One snapshot: its commit, when, and why it was taken."""

    commit: str
    when: float
    reason: str

    @property
    def short(self) -> str:
        return self.commit[:10]


@attrs.frozen(slots=True, kw_only=True)
class ShadowRepo:
    """The shadow repository of one working directory."""

    workdir: Path
    git_dir: Path
    max_files: int = 50_000
    max_file_bytes: int = 20_000_000
    keep: int = 50
    timeout: float = 60.0

    @classmethod
    def for_dir(cls, root: Path, workdir: Path, **limits: int | float) -> ShadowRepo:
        real = Path(os.path.realpath(workdir))
        name = hashlib.sha256(str(real).encode("utf-8", "surrogateescape")).hexdigest()[:16]
        return cls(workdir=real, git_dir=root / name, **limits)  # type: ignore[arg-type]

    # -- git --------------------------------------------------------------------------------

    def _env(self) -> Mapping[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(self.workdir),
            GIT_TERMINAL_PROMPT="0",
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            LC_ALL="C",
        )
        return env

    def git(self, *args: str, check: bool = True, env: Mapping[str, str] | None = None) -> str:
        command = [
            "git",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.autocrlf=false",
            "-c",
            "user.name=Hermes checkpoints",
            "-c",
            "user.email=checkpoints@hermes.invalid",
            *args,
        ]
        try:
            done = subprocess.run(
                command,
                cwd=self.workdir,
                env={**self._env(), **(env or {})},
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CheckpointError(f"git {args[0]} failed: {exc}") from exc
        out = done.stdout.decode("utf-8", "replace")
        if check and done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {err[-1] if err else done.returncode}")
        return out

    def _init(self) -> None:
        if (self.git_dir / "HEAD").exists():
            return
        self.git_dir.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q")
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.git_dir / "info" / "exclude").write_text("\n".join(DEFAULT_EXCLUDES) + "\n")
        (self.git_dir / "hermes-workdir").write_text(str(self.workdir) + "\n")

    # -- snapshots ----------------------------------------------------------------------------

    def snapshot(self, reason: str) -> Checkpoint | None:
        """Snapshot the directory now; ``None`` when nothing changed since the last one."""
        if not self.workdir.is_dir():
            raise CheckpointError(f"{self.workdir} is not a directory")
        big = self._scan()
        self._init()
        (self.git_dir / "info" / "large").write_text("".join(f"/{p}\n" for p in big))
        self.git("-c", f"core.excludesFile={self.git_dir / 'info' / 'large'}", "add", "-A", ".")
        has_head = self.git("rev-parse", "--verify", "-q", "HEAD", check=False).strip()
        if has_head and not self.git("diff", "--cached", "--name-only", "HEAD").strip():
            return None
        message = (
            reason
            if not big
            else f"{reason}\n\nleft out (over the size limit): "
            + (", ".join(big[:20]) + (" ..." if len(big) > 20 else ""))
        )
        self.git("commit", "-q", "--no-verify", "--allow-empty", "-m", message)
        self._prune()
        return self.list()[0]

    def _scan(self) -> list[str]:
        """Files over the size limit (relative paths); refuses a tree with too many files."""
        count = 0
        big: list[str] = []
        for current, dirs, files in os.walk(self.workdir):
            dirs[:] = [d for d in dirs if d not in _PRUNED]
            count += len(files)
            if count > self.max_files:
                raise CheckpointError(
                    f"{self.workdir} holds more than {self.max_files:,} files; not snapshotted"
                )
            for name in files:
                path = os.path.join(current, name)
                try:
                    if os.lstat(path).st_size > self.max_file_bytes:
                        big.append(os.path.relpath(path, self.workdir))
                except OSError:
                    continue
        return sorted(big)

    def _prune(self) -> None:
        """Keep the newest ``keep`` checkpoints: older history is cut (a new root commit).

        Runs once ten past the limit, so its git calls are paid once per ten snapshots.
        """
        commits = self.git("rev-list", "--reverse", "HEAD").split()
        if len(commits) <= self.keep + 10:
            return
        parent = ""
        for commit in commits[-self.keep :]:
            tree = self.git("rev-parse", f"{commit}^{{tree}}").strip()
            body = self.git("log", "-1", "--format=%B", commit).strip() or "checkpoint"
            when = self.git("log", "-1", "--format=%ct", commit).strip()
            dated = {"GIT_AUTHOR_DATE": f"{when} +0000", "GIT_COMMITTER_DATE": f"{when} +0000"}
            args = ["commit-tree", tree, "-m", body, *(["-p", parent] if parent else [])]
            parent = self.git(*args, env=dated).strip()
        self.git("update-ref", "HEAD", parent)
        self.git("reflog", "expire", "--expire=now", "--all", check=False)
        self.git("gc", "-q", "--prune=now", check=False)

    # -- reading and restoring ----------------------------------------------------------------

    def list(self) -> list[Checkpoint]:
        """Checkpoints, newest first (empty before the first)."""
        if not (self.git_dir / "HEAD").exists():
            return []
        if not self.git("rev-parse", "--verify", "-q", "HEAD", check=False).strip():
            return []
        out = self.git("log", "--format=%H%x1f%ct%x1f%s", "HEAD")
        found: list[Checkpoint] = []
        for line in out.splitlines():
            commit, when, subject = line.split("\x1f", 2)
            found.append(Checkpoint(commit, float(when), subject))
        return found

    def pick(self, number: int) -> Checkpoint:
        """The ``number``-th newest checkpoint (1 = the latest), or a clear error."""
        found = self.list()
        if not found:
            raise CheckpointError(f"no checkpoints of {self.workdir} yet")
        if not 1 <= number <= len(found):
            raise CheckpointError(
                f"there is no checkpoint {number} of {self.workdir}: it has {len(found)} "
                f"(1 = the latest)"
            )
        return found[number - 1]

    def diff(self, number: int = 1) -> str:
        """What changed in the directory since checkpoint ``number`` (a git stat and patch)."""
        target = self.pick(number)
        self.git("add", "-A", ".")
        return self.git("diff", "--cached", "--stat", "--patch", target.commit)

    def restore(self, number: int = 1) -> tuple[Checkpoint, Checkpoint | None]:
        """Put the directory back as checkpoint ``number`` left it.

        The present state is checkpointed first (returned second), so a restore
        can itself be undone. Files created since are removed; ignored files
        and files left out of the snapshot are not touched.
        """
        target = self.pick(number)
        before = self.snapshot(f"before restoring {target.short}: {target.reason}"[:200])
        added = self.git(
            "diff", "--name-only", "--diff-filter=A", "-z", target.commit, "HEAD"
        ).split("\0")
        for rel in filter(None, added):
            path = self.workdir / rel
            path.unlink(missing_ok=True)
            _remove_empty_parents(path.parent, self.workdir)
        self.git("checkout", target.commit, "--", ".")
        return target, before


def _remove_empty_parents(directory: Path, stop: Path) -> None:
    while directory != stop and stop in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def age(when: float, now: float | None = None) -> str:
    """``"3 min ago"``: how long ago a checkpoint was taken."""
    seconds = max(0, int((time.time() if now is None else now) - when))
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} d ago"
