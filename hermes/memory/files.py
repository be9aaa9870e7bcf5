"""File primitives of the memory stores: the directory lock, verified reads, atomic writes.

- ``locked(path, timeout)`` holds an exclusive ``fcntl.flock`` on a lock file.
  It polls with ``LOCK_NB`` and short sleeps (the wait blocks the caller: the
  lock is only ever held for a read-modify-write of a few kilobytes) and raises
  ``MemoryLocked`` naming the path after ``timeout`` seconds. flock locks belong
  to the open file, so two holders in one process exclude each other too; never
  nest two ``locked`` blocks on the same path.
- ``read_verified(path)`` returns the text, ``None`` when the file does not
  exist, and raises ``MemoryUnreadable`` when it exists but cannot be read or
  is not UTF-8, so that a caller never overwrites a file it could not read.
- ``atomic_write(path, text)`` writes a temporary file in the same directory
  (mode 0600), fsyncs it, renames it over ``path`` and fsyncs the directory: a
  reader sees the old content or the new one, never a part. On failure the
  temporary file is removed and ``path`` is untouched.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from hermes.files import replace_file

from .errors import MemoryLocked, MemoryUnreadable

DIR_MODE = 0o700
FILE_MODE = 0o600

_FIRST_SLEEP = 0.002
_MAX_SLEEP = 0.05


def ensure_dir(path: Path) -> None:
    """Create ``path`` (mode 0700) and missing parents; an existing directory is left as is."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)


@contextlib.contextmanager
def locked(path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive flock on ``path`` (created 0600); ``MemoryLocked`` after ``timeout`` s."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        start = time.monotonic()
        pause = _FIRST_SLEEP
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - start
                if waited >= timeout:
                    raise MemoryLocked(path, waited) from None
                time.sleep(min(pause, timeout - waited))
                pause = min(pause * 2, _MAX_SLEEP)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def read_verified(path: Path) -> str | None:
    """The UTF-8 text of ``path``; ``None`` if absent; ``MemoryUnreadable`` if unreadable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise MemoryUnreadable(path, "it is a directory") from None
    except OSError as exc:
        raise MemoryUnreadable(path, exc.strerror or str(exc)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start]
        raise MemoryUnreadable(
            path, f"not valid UTF-8: byte 0x{bad:02x} at offset {exc.start}"
        ) from None


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically and durably; the new file is 0600."""
    replace_file(path, text, mode=0o600)
