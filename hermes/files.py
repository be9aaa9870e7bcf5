"""Replacing a file atomically and durably, the one way every package does it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

NEW_FILE_MODE = 0o600
"""Permission bits of a file ``replace_file`` creates (the user's data stays private)."""


def replace_file(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` (text is UTF-8) so a reader sees the old or the new
    file, never a part, and the new one survives a crash once this returns.

    A temporary file beside it is written, fsynced, renamed over ``path``, and the
    directory fsynced. ``mode`` sets the new file's permission bits; None keeps those
    of the file it replaces (``NEW_FILE_MODE`` when there is none).
    """
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o777
        except FileNotFoundError:
            mode = NEW_FILE_MODE
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    """Make a rename or a new entry in directory ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
