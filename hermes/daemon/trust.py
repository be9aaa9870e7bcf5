"""Trust checks on the runtime directory and the files read from it.

The runtime directory says where the daemon listens and holds its token; in
the ``/tmp`` fallback another local user could have created it first. Before
the CLI (or the daemon) trusts it, the directory and every file read from it
must belong to this user and give no access to group or others; files are
opened without following symlinks and checked on the open descriptor.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class Untrusted(Exception):
    """A path that is not this user's private file or directory (one-line message)."""


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (KeyError, ImportError):
        return f"uid {uid}"


def _check(path: Path, info: os.stat_result, kind: str, private: int, fix: str) -> None:
    me = os.getuid()
    if info.st_uid != me:
        raise Untrusted(
            f"refusing {kind} {path}: it belongs to {_owner(info.st_uid)}, not to you "
            f"({_owner(me)}); remove it, or set HERMES_RUNTIME_DIR to a directory of yours"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise Untrusted(
            f"refusing {kind} {path}: mode {mode:04o} gives other users access "
            f"(want {private:04o}); {fix}"
        )


def check_private_dir(path: Path) -> bool:
    """True if ``path`` is this user's directory with mode 0700 or less; False if missing.

    Raises ``Untrusted`` if it is not a directory, belongs to another user or
    lets group or others in.
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        raise Untrusted(f"refusing runtime directory {path}: it is not a directory; remove it")
    _check(
        path,
        info,
        "runtime directory",
        0o700,
        f"if nobody else could have written to it, `chmod 700 {path}`, else remove it",
    )
    return True


def _check_file(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise Untrusted(f"refusing {path}: it is not a regular file; remove it")
    _check(path, info, "file", 0o600, "remove it (the daemon writes it again at start)")


def check_private_file(path: Path) -> bool:
    """Like ``read_private_file`` without reading: True if it exists and is private."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    _check_file(path, info)
    return True


def read_private_file(path: Path) -> str | None:
    """The text of this user's private regular file ``path`` (None if it does not exist).

    Opened with ``O_NOFOLLOW`` and checked on the descriptor, so what is read is
    what was checked. Raises ``Untrusted`` for a symlink, another owner or a
    mode with group or other bits.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise Untrusted(f"refusing {path}: it is a symlink; remove it") from None
        raise exc
    try:
        _check_file(path, os.fstat(fd))
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8", errors="replace")
    finally:
        os.close(fd)
