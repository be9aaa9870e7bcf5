"""One daemon per user: an ``flock`` on a file in the runtime directory.

The kernel drops an ``flock`` when its process dies, however it dies, so a
lock file left by a killed daemon (SIGKILL, OOM) is stale by construction:
the next daemon takes the lock over and says so, naming the old pid.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

log = logging.getLogger("hermes.daemon")


class AlreadyRunning(RuntimeError):
    """Another daemon holds the lock."""

    def __init__(self, path: Path, pid: int | None) -> None:
        who = f"pid {pid}" if pid is not None else "another process"
        super().__init__(f"a hermes daemon is already running ({who}; lock {path})")
        self.pid = pid


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


class DaemonLock:
    """Hold with ``acquire()``; ``release()`` (or process exit) frees it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self.stale_pid: int | None = None
        """The pid named by a stale lock file that was taken over."""

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise AlreadyRunning(self.path, _read_pid(self.path)) from None
        previous = _read_pid(self.path)
        if previous is not None and previous != os.getpid():
            self.stale_pid = previous
            log.warning("taking over a stale lock from pid %d (%s)", previous, self.path)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)


def holder(path: Path) -> int | None:
    """The pid of the live daemon holding ``path``, or None if nobody holds it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_pid(path) or -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
