"""What a session has seen of each file: the one owner of its read state (#112).

``write_file`` may replace an existing file only when the session has it *in
full* and *as it is now*: read whole with ``read_file``, or written by the
session itself, and not changed on disk since (size, modification time and
inode all as recorded). A file read only in part, or edited with ``patch``
without a full read, counts as not seen in full. New files and paths that
cannot be checked proceed.

One ``ReadLedger`` lives in the session's ``ToolContext`` (``files``): every
turn's context is derived from it, so the state lasts as long as the session
actor; a restarted session starts empty, and the model reads again.
"""

from __future__ import annotations

import os
import stat
import threading

import attrs


@attrs.frozen(slots=True)
class Stamp:
    """A file's identity and version as ``stat`` reports it."""

    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of(cls, path: str) -> Stamp | None:
        """The stamp of ``path`` (links followed); ``None``: missing or not a regular file."""
        try:
            info = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None  # a directory or device: the write itself says what is wrong
        return cls(info.st_size, info.st_mtime_ns, info.st_ino)


@attrs.frozen(slots=True)
class _Seen:
    stamp: Stamp
    full: bool


@attrs.define(slots=True)
class ReadLedger:
    """Per-session record of files read or written, keyed by real path (thread-safe)."""

    max_entries: int = 10_000
    _seen: dict[str, _Seen] = attrs.field(factory=dict, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False, repr=False)

    def record_read(self, real: str, stamp: Stamp | None, *, full: bool) -> None:
        """``read_file`` showed ``real`` (its real path, stamped before reading), whole or not.

        A partial read never downgrades a full one of the same version.
        """
        if stamp is None:
            return
        with self._lock:
            before = self._seen.get(real)
            keep_full = before is not None and before.full and before.stamp == stamp
            self._put(real, _Seen(stamp, full or keep_full))

    def record_write(self, path: str | os.PathLike[str], *, full: bool) -> None:
        """The session wrote ``path``: ``full`` for a whole-file write, else an edit (blocking)."""
        real = os.path.realpath(path)
        stamp = Stamp.of(real)
        if stamp is None:
            return
        with self._lock:
            before = self._seen.get(real)
            self._put(real, _Seen(stamp, full or (before is not None and before.full)))

    def overwrite_problem(self, path: str | os.PathLike[str]) -> str | None:
        """Why replacing ``path`` whole is refused now; ``None`` when it may go on (blocking)."""
        real = os.path.realpath(path)
        now = Stamp.of(real)
        if now is None:
            return None  # a new file (or one that cannot be checked): nothing to lose
        with self._lock:
            seen = self._seen.get(real)
        if seen is None:
            return "it already exists and you have not read it in this session"
        if seen.stamp != now:
            return (
                "it changed on disk since you last read or wrote it "
                f"({_change(seen.stamp, now)}), so your copy of it is out of date"
            )
        if not seen.full:
            return "you have seen only part of it (a partial read, or a patch without a full read)"
        return None

    def _put(self, real: str, seen: _Seen) -> None:
        self._seen.pop(real, None)
        self._seen[real] = seen
        if len(self._seen) > self.max_entries:  # forget the oldest: it must be read again
            del self._seen[next(iter(self._seen))]


def _change(before: Stamp, now: Stamp) -> str:
    if before.inode != now.inode:
        return "it was replaced by another file"
    if before.size != now.size:
        return f"{before.size:,} bytes then, {now.size:,} now"
    return "its modification time changed"
