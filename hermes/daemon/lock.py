"""One daemon per runtime directory and per data directory: an ``flock`` on a file.

The kernel drops an ``flock`` when its process dies, however it dies, so a
lock file left by a killed daemon (SIGKILL, OOM) is stale by construction:
the next daemon takes the lock over and says so, naming the old pid.

The file holds ``PID START``: the holder's pid and its start time (field 22 of
``/proc/PID/stat``), so that ``hermes daemon stop`` can tell the daemon from a
process that reused its pid (``pidcheck.verify_daemon``).
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

import attrs

from .pidcheck import start_time

log = logging.getLogger("hermes.daemon")


class AlreadyRunning(RuntimeError):
    """Another daemon holds the lock."""

    def __init__(self, path: Path, pid: int | None, what: str | None = None) -> None:
        who = f"pid {pid}" if pid is not None else "another process"
        if what is None:
            message = f"a hermes daemon is already running ({who}; lock {path})"
        else:
            message = (
                f"another hermes daemon ({who}) is using the {what} {path.parent} (lock {path}); "
                f"stop that daemon or give this one another {what}"
            )
        super().__init__(message)
        self.pid = pid


@attrs.frozen(slots=True)
class LockInfo:
    """What a lock file says: the holder's pid and start time (None in an old-format file)."""

    pid: int
    start: int | None


def parse_lock(text: str) -> LockInfo | None:
    """``PID START`` (or the older ``PID``) as a ``LockInfo``; None if empty or garbled."""
    words = text.split()
    try:
        if len(words) == 1:
            return LockInfo(int(words[0]), None)
        if len(words) == 2:
            return LockInfo(int(words[0]), int(words[1]))
    except ValueError:
        return None
    return None


def read_lock(path: Path) -> LockInfo | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return parse_lock(os.read(fd, 256).decode(errors="replace"))
    finally:
        os.close(fd)


def _read_pid(path: Path) -> int | None:
    info = read_lock(path)
    return info.pid if info is not None else None


class DaemonLock:
    """Hold with ``acquire()``; ``release()`` (or process exit) frees it.

    ``what`` names the directory the lock guards in the refusal message
    (``"data directory"``); None keeps the one-daemon-per-user wording.
    """

    def __init__(self, path: Path, what: str | None = None) -> None:
        self.path = path
        self.what = what
        self._fd: int | None = None
        self.stale_pid: int | None = None
        """The pid named by a stale lock file that was taken over."""

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            info = os.fstat(fd)
            if info.st_uid != os.getuid():
                raise PermissionError(f"lock file {self.path} belongs to uid {info.st_uid}")
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise AlreadyRunning(self.path, _read_pid(self.path), self.what) from None
        except BaseException:
            os.close(fd)
            raise
        os.fchmod(fd, 0o600)
        previous = _read_pid(self.path)
        if previous is not None and previous != os.getpid():
            self.stale_pid = previous
            log.warning("taking over a stale lock from pid %d (%s)", previous, self.path)
        pid = os.getpid()
        started = start_time(pid)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{pid} {started if started is not None else ''}".strip().encode() + b"\n", 0)
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
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
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
