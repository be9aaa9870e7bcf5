"""What ``/proc`` says about a process and the processes a run started (Linux only)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import trio

from bench.model import process_cpu_seconds

__all__ = [
    "alive",
    "fd_count",
    "marked_pids",
    "pids_in",
    "process_cpu_seconds",
    "rss_bytes",
    "thread_count",
    "wait_for_pids",
    "wait_gone",
    "zombie_children",
]


def _status(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(key):
                return int(line.split()[1])
    raise RuntimeError(f"{key} not in /proc/{pid}/status")


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid``."""
    return _status(pid, "VmRSS:") * 1024


def thread_count(pid: int) -> int:
    """OS threads of ``pid``."""
    return _status(pid, "Threads:")


def fd_count(pid: int) -> int:
    """Open file descriptors of ``pid``."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def _pids() -> Iterator[int]:
    for name in os.listdir("/proc"):
        if name.isdigit():
            yield int(name)


def marked_pids(mark: str) -> list[int]:
    """Processes whose environment holds ``mark`` (``NAME=value``).

    The run puts the mark in the daemon's environment; every process the
    daemon starts inherits it, so a process that escaped its group (or was
    reparented to init) is still found. Zombies have no environment: see
    ``zombie_children``.
    """
    needle = mark.encode() + b"\0"
    found = []
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                data = environ.read()
        except OSError:
            continue
        if needle in data or data.endswith(mark.encode()):
            found.append(pid)
    return found


def pids_in(cwd: str, mark: str) -> list[int]:
    """Marked processes whose working directory is ``cwd``."""
    found = []
    for pid in marked_pids(mark):
        try:
            if os.readlink(f"/proc/{pid}/cwd") == cwd:
                found.append(pid)
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def zombie_children(parent: int) -> list[int]:
    """Children of ``parent`` that exited and were never reaped."""
    found = []
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == parent:
            found.append(pid)
    return found


async def wait_for_pids(mark: str, cwd: Path, timeout: float = 10.0) -> tuple[int, ...]:
    """The marked processes in ``cwd``, once there is at least one (empty after ``timeout``)."""
    with trio.move_on_after(timeout):
        while True:
            pids = pids_in(str(cwd), mark)
            if pids:
                return tuple(pids)
            await trio.sleep(0.005)
    return ()


async def wait_gone(pids: tuple[int, ...], timeout: float) -> bool:
    """Poll every millisecond until every one of ``pids`` is gone (False: not in time)."""
    for _ in range(int(timeout * 1000)):
        if not any(alive(pid) for pid in pids):
            return True
        await trio.sleep(0.001)
    return False
