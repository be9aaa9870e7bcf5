"""Getting the daemon's directories ready, and start-up failures as one line.

The daemon runs with umask 0077: what it creates is 0700 (directories) or
0600 (files). A data directory left by an older version with wider modes is
tightened at start. Every failure here is a ``StartupError`` whose message is
one line: what is wrong, with which path, and what to do.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .trust import Untrusted, check_private_dir

UMASK = 0o077


class StartupError(Exception):
    """The daemon cannot start; ``str()`` is the one line to print."""


def _hint(code: int | None, env: str) -> str:
    if code in (errno.EACCES, errno.EPERM):
        return f"check its permissions and its parents', or set {env} to a directory you can write"
    if code == errno.EROFS:
        return f"the file system is read-only; set {env} to a writable directory"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "the disk (or your quota) is full; free some space"
    if code in (errno.EEXIST, errno.ENOTDIR):
        return f"a file is in the way of the directory; remove it or set {env} elsewhere"
    return f"fix it, or set {env} to another directory"


def os_failure(exc: OSError, what: str, path: Path, env: str = "HERMES_DATA_DIR") -> StartupError:
    """A ``StartupError`` for ``exc`` raised while trying to ``what`` ``path``."""
    reason = exc.strerror or str(exc)
    return StartupError(f"cannot {what} {path}: {reason}; {_hint(exc.errno, env)}")


def prepare_runtime_dir(path: Path) -> None:
    """Create the runtime directory 0700, or check an existing one is ours and private."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise os_failure(exc, "create the runtime directory", path, "HERMES_RUNTIME_DIR") from None
    try:
        check_private_dir(path)
    except Untrusted as exc:
        raise StartupError(str(exc)) from None


def prepare_data_dir(path: Path) -> None:
    """Create the data directory (0700), or check an existing one is ours; check it takes
    writes (a probe file of 4 KiB, synced and removed)."""
    try:
        if not path.exists():
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except OSError as exc:
        raise os_failure(exc, "create the data directory", path) from None
    if not stat.S_ISDIR(info.st_mode):
        raise StartupError(
            f"cannot use the data directory {path}: it is not a directory; "
            "remove it or set HERMES_DATA_DIR elsewhere"
        )
    if info.st_uid != os.getuid():
        raise StartupError(
            f"refusing the data directory {path}: it belongs to uid {info.st_uid}, not to you "
            f"(uid {os.getuid()}); set HERMES_DATA_DIR to a directory of yours"
        )
    probe = path / f".write-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, b"\0" * 4096)
            os.fsync(fd)
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)
    except OSError as exc:
        raise os_failure(exc, "write in the data directory", path) from None


def tighten(root: Path) -> list[str]:
    """Drop group and other bits from ``root`` and everything under it (not following
    symlinks), as an older version may have left them. Returns notes for the log:
    what was changed, and what could not be (not fatal)."""
    count = 0
    notes: list[str] = []
    for top, dirs, files in os.walk(root, followlinks=False):
        for name in [".", *dirs, *files]:
            path = os.path.join(top, name) if name != "." else top
            try:
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode) or not stat.S_IMODE(info.st_mode) & 0o077:
                    continue
                os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o077)
                count += 1
            except OSError as exc:
                notes.append(f"cannot make {path} private: {exc}")
    if count:
        notes.insert(0, f"made {count} path(s) under {root} private (group/other access removed)")
    return notes
