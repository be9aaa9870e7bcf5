"""What ``/proc`` says about a process, and killing a group we hold no handle for.

A pid alone does not name a process: after it exits, the kernel may give the
number to another one. A ``Fingerprint`` adds the start time (field 22 of
``/proc/<pid>/stat``, clock ticks after boot) and the kernel's boot id, so a
recycled pid is told apart (``Liveness.RECYCLED``) and never signalled.

``kill_adopted_group`` is ``hermes.procgroup.kill_group`` for processes
that are not our ``trio.Process`` (adopted after a restart, or orphans): the
same ladder (SIGTERM to the group, grace, SIGKILL, verified through ``/proc``),
preceded by the fingerprint check. Signalling a group by its id is safe while
its leader matches the fingerprint, or while the leader is gone but members
remain: the kernel does not reuse a number that still names a process group.
"""

from __future__ import annotations

import enum
import functools
import os
import signal

import attrs
import trio

from hermes.procgroup import (
    KillReport,
    exit_status,
    group_members,
    live_members,
    reap_group,
    signal_group,
)

BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"
_START_TIME_INDEX = 22 - 3
"""Field 22 (starttime) counted from field 3 (state), the first after the command name."""


def _stat(pid: int) -> list[bytes] | None:
    """Fields 3.. of ``/proc/<pid>/stat`` (state first), or None if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rfind(b")") + 2 :].split()


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks after boot, or None if it does not exist."""
    fields = _stat(pid)
    if fields is None or len(fields) <= _START_TIME_INDEX:
        return None
    return int(fields[_START_TIME_INDEX])


def state_of(pid: int) -> str | None:
    """The ``/proc`` state letter (``R``, ``S``, ``Z``...), or None if there is no such process."""
    fields = _stat(pid)
    return None if not fields else fields[0].decode()


@functools.cache
def boot_id() -> str:
    """The kernel's boot id (a fresh one after every reboot)."""
    try:
        with open(BOOT_ID_PATH) as f:
            return f.read().strip() or "unknown"
    except OSError:
        return "unknown"


class Liveness(enum.Enum):
    ALIVE = "alive"
    """The very process: same pid, boot and start time, not a zombie."""
    GONE = "gone"
    """It exited (no such pid, a zombie, or the machine rebooted since)."""
    RECYCLED = "recycled"
    """The pid now names another process: never signal it."""


@attrs.frozen(slots=True)
class Fingerprint:
    """A process's identity: pid, start time, boot."""

    pid: int
    start_time: int
    boot_id: str

    @classmethod
    def of(cls, pid: int) -> Fingerprint | None:
        """The fingerprint of the live process ``pid`` (None if there is none)."""
        started = start_time(pid)
        return None if started is None else cls(pid, started, boot_id())

    def check(self) -> Liveness:
        """Is the process this fingerprint names still running?"""
        fields = _stat(self.pid)
        if fields is None or len(fields) <= _START_TIME_INDEX:
            return Liveness.GONE
        if self.boot_id != boot_id() or int(fields[_START_TIME_INDEX]) != self.start_time:
            return Liveness.RECYCLED
        if fields[0] in (b"Z", b"X"):
            return Liveness.GONE
        return Liveness.ALIVE


@functools.cache
def self_fingerprint() -> Fingerprint:
    """This daemon process's fingerprint (the owner stamp of its checkpoints)."""
    me = Fingerprint.of(os.getpid())
    return me if me is not None else Fingerprint(os.getpid(), 0, boot_id())


def reap_pid(pid: int) -> int | None:
    """Reap ``pid`` if it is our exited child; its wait status as a shell reports it, or None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError):
        return None
    if done == 0:
        return None
    return exit_status(os.waitstatus_to_exitcode(status))


async def wait_until_gone(pgid: int, timeout: float) -> bool:
    """Poll ``/proc`` until no live member of ``pgid`` is left, at most ``timeout`` seconds."""
    poll = 0.005
    with trio.move_on_after(timeout):
        while live_members(pgid):
            await trio.sleep(poll)
            poll = min(poll * 1.5, 0.05)
        return True
    return not live_members(pgid)


async def kill_adopted_group(
    pgid: int, leader: Fingerprint, *, grace: float, kill_wait: float
) -> KillReport | None:
    """SIGTERM, ``grace``, SIGKILL, verify, for a group we hold no ``trio.Process`` for.

    Returns None, having sent nothing, when the leader's pid was recycled.
    Members that are our children (we are their subreaper) are reaped.
    Shield it yourself; it takes at most about ``grace + kill_wait`` seconds.
    """
    if leader.check() is Liveness.RECYCLED:
        return None
    sigkill = False
    if live_members(pgid):
        signal_group(pgid, signal.SIGTERM)
        if not await wait_until_gone(pgid, grace):
            sigkill = True
            signal_group(pgid, signal.SIGKILL)
            await wait_until_gone(pgid, kill_wait)
    reap_group(pgid)  # zombies left after this are not our children
    members = group_members(pgid)
    return KillReport(
        sigkill,
        tuple(m.pid for m in members if not m.zombie),
        tuple(m.pid for m in members if m.zombie),
    )
