"""Is this pid our hermes daemon? Checked from ``/proc`` before any signal is sent.

Three things must hold: the process belongs to this user (every uid in
``/proc/PID/status``), it is a Python running ``hermes ... daemon``
(``/proc/PID/exe`` and ``cmdline``), and its start time (field 22 of
``/proc/PID/stat``, clock ticks since boot) is the one the daemon recorded in
its lock file when it started: a pid reused by another process fails that.
"""

from __future__ import annotations

import os
from pathlib import Path

from .trust import Untrusted

PROC = Path("/proc")


class NotOurDaemon(Untrusted):
    """The pid is not this user's hermes daemon; nothing was signalled."""


def start_time(pid: int) -> int | None:
    """Field 22 of ``/proc/PID/stat`` (None if there is no such process or no ``/proc``)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ')'.
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[19])


def _uids(pid: int) -> list[int]:
    for line in (PROC / str(pid) / "status").read_text().splitlines():
        if line.startswith("Uid:"):
            return [int(v) for v in line.split()[1:]]
    return []


def _is_hermes_daemon(argv: list[str]) -> bool:
    """``python [-X ...] -m hermes daemon``, ``python .../hermes daemon`` or ``-c ... hermes``."""
    if not argv or "python" not in os.path.basename(argv[0]):
        return False
    if "daemon" not in argv[1:]:
        return False
    words = argv[1 : argv.index("daemon", 1)]
    return any(w == "hermes" or os.path.basename(w) == "hermes" or "hermes" in w for w in words)


def verify_daemon(pid: int, recorded_start: int | None) -> None:
    """Raise ``NotOurDaemon`` unless ``pid`` is this user's hermes daemon that started
    at ``recorded_start`` (the start time its lock file names)."""
    where = f"pid {pid}"
    try:
        uids = _uids(pid)
        argv = (PROC / str(pid) / "cmdline").read_bytes().decode(errors="replace")
        exe = os.readlink(PROC / str(pid) / "exe")
    except FileNotFoundError:
        raise NotOurDaemon(f"refusing to signal {where}: no such process") from None
    except PermissionError:
        raise NotOurDaemon(
            f"refusing to signal {where}: cannot read /proc/{pid} (another user's process?)"
        ) from None
    me = os.getuid()
    if not uids or any(uid != me for uid in uids):
        raise NotOurDaemon(
            f"refusing to signal {where}: it runs as uid {uids[0] if uids else '?'}, not as you "
            f"(uid {me}); check the runtime directory's lock file"
        )
    args = [a for a in argv.split("\0") if a]
    if "python" not in os.path.basename(exe) or not _is_hermes_daemon(args):
        shown = " ".join(args)[:120]
        raise NotOurDaemon(
            f"refusing to signal {where}: it is not a hermes daemon ({shown!r}); "
            "the lock file names the wrong process"
        )
    actual = start_time(pid)
    if recorded_start is None:
        raise NotOurDaemon(
            f"refusing to signal {where}: its lock file records no start time (a daemon of "
            "an older version?); stop it yourself after checking it is yours"
        )
    if actual != recorded_start:
        raise NotOurDaemon(
            f"refusing to signal {where}: it started at tick {actual}, but the daemon that "
            f"took the lock started at tick {recorded_start} (the pid was reused)"
        )
