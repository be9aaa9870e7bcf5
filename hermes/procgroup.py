"""Running a command in its own process group, and killing that group completely.

A base module (below every package: ``tests/test_layers.py``): the tools' foreground
commands and the background-process watchers (``hermes.processes``) both use it.

``run_command`` starts ``argv`` with ``start_new_session=True`` (a new session,
so a new process group whose id is the child's pid), stdin from ``/dev/null``,
stdout and stderr merged into one pipe. It reads the pipe in chunks (never by
line, so output without newlines cannot stall it) into an ``OutputCapture``
that keeps the head and the tail within a fixed size.

It ends in one of four ways, and in each the whole group is gone afterwards:

- the leader exits: leftover members of its group (``cmd &``) are killed;
- the timeout fires: the group is killed, ``timed_out`` is set;
- ``interrupt`` (a ``hermes.bell.Bell``) rings: the group is killed,
  ``interrupted`` is set;
- the caller's scope is cancelled: the group is killed in a shielded,
  time-bounded cleanup (SIGKILL after a short ``cancel_grace``, 0.2 s) and
  ``trio.Cancelled`` propagates.

The one exception: with ``yield_to`` and ``hand_over``, a ``yield_to`` bell
that rings while the leader runs stops the reading and offers the live process to
``hand_over`` (a ``Handover``: a redirect moving a foreground command to the
background registry, ``hermes.processes.yielded``). Once that sets ``taken``
the group, its output pipe and its record are the taker's and nothing here
touches them (``handed_over`` in the result); not taken, it is killed as on an
interrupt.

Killing a group (``kill_group``) is: SIGTERM to the group, wait up to ``grace``
for its members to exit, SIGKILL to the group, reap the leader, reap members
this process adopted, then check ``/proc`` that no member survives. ``trio``'s
own ``run_process`` signals only the leader; a grandchild would survive it.

With a ``GroupSlot`` (a foreground tool command: see ``GroupLedger``) the
child starts held: ``gated`` wraps ``argv`` in a tiny ``sh`` that waits for a
line on its stdin before it ``exec``s the command (same pid, same start time).
The slot records the group (its pid) first, then the line is written: no
command runs unrecorded, and if this process dies before the record is written
the pipe's end closes, the gate reads EOF and exits without running anything.
Once the group is reaped the slot is told (the record is dropped).

Orphaned grandchildren are re-parented to the nearest *subreaper*. PID 1 of a
container or sandbox often does not reap, which leaves zombies, so
``run_command`` makes this process a subreaper (``enable_subreaper``, Linux
``prctl``) and reaps the members of its groups itself.

Commands run with the user's umask (``user_umask``), recorded by the daemon
before it made its own files private.
"""

from __future__ import annotations

import abc
import contextlib
import ctypes
import errno
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

import attrs
import trio

from hermes.bell import Bell, cancelled_by

_PR_SET_CHILD_SUBREAPER = 36
_subreaper_enabled = False

GATE_SHELL = "/bin/sh"
GATE_LINE = b"go\n"
_GATE_SCRIPT = 'IFS= read -r go && [ "$go" = go ] || exit 125; exec "$@"'
_GATE_SCRIPT_NULL_STDIN = 'IFS= read -r go && [ "$go" = go ] || exit 125; exec "$@" </dev/null'
EXIT_NOT_RELEASED = 125
"""The gate's exit status when its stdin ended without the line: nothing was run."""


_user_umask = 0o022
"""The umask of the user's shell, recorded by the daemon before it went private (0077)."""


def record_user_umask(mask: int) -> None:
    """Remember the umask the daemon started with, for what tools create for the user."""
    global _user_umask
    _user_umask = mask & 0o777


def user_umask() -> int:
    """The umask tools create with: commands run with it, new files and directories get it.

    The daemon's own files are private (umask 0077); what the agent makes in a
    project must look as if the user had made it (``0644`` files under ``022``).
    """
    return _user_umask


def gated(argv: Sequence[str], *, null_stdin: bool = True) -> list[str]:
    """``argv`` held until ``GATE_LINE`` arrives on stdin (then exec'd in the same process).

    Start it with ``stdin=PIPE`` and write ``GATE_LINE`` to release it; if the
    pipe closes first, it exits with ``EXIT_NOT_RELEASED`` and runs nothing.
    ``null_stdin``: the command then reads ``/dev/null`` (else the rest of the pipe).
    """
    script = _GATE_SCRIPT_NULL_STDIN if null_stdin else _GATE_SCRIPT
    return [GATE_SHELL, "-c", script, "hermes-gate", *argv]


class GroupNotRecorded(Exception):
    """A process group could not be recorded; its command was not run."""


class GroupSlot(abc.ABC):
    """One command's entry in a ``GroupLedger``."""

    @abc.abstractmethod
    async def started(self, pid: int) -> None:
        """Record the held group ``pid`` durably; ``GroupNotRecorded`` if it could not be."""

    @abc.abstractmethod
    async def reaped(self) -> None:
        """The group is gone and reaped: drop its record (bounded, never raises)."""


class GroupLedger(abc.ABC):
    """Where foreground tool commands' process groups are recorded before they run.

    A tool context service (``ctx.service(GroupLedger)``): the session's is
    ``hermes.processes.ForegroundLedger``, so a daemon restarted after a crash
    finds the groups its predecessor left and kills or lists them.
    """

    @abc.abstractmethod
    def slot(self, call_id: str, command: str, cwd: str) -> GroupSlot:
        """An entry for one command of tool call ``call_id`` (nothing recorded yet)."""


def enable_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); idempotent.

    Returns whether it is (or already was) enabled. Call it at daemon start;
    ``run_command`` calls it too.
    """
    global _subreaper_enabled
    if _subreaper_enabled:
        return True
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper_enabled = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper_enabled = False
    return _subreaper_enabled


@attrs.frozen(slots=True)
class Member:
    pid: int
    state: str
    """The ``/proc/<pid>/stat`` state letter: ``R``, ``S``, ``D``, ``Z``..."""

    @property
    def zombie(self) -> bool:
        return self.state in ("Z", "X")


def group_members(pgid: int) -> list[Member]:
    """Every process whose process group is ``pgid``, from ``/proc``.

    An empty group (the usual case once a command's leader is reaped) is answered
    by one ``killpg(pgid, 0)`` instead of reading every process's ``stat``: the
    scan costs 10-15 us per process on the machine (measured), so milliseconds per
    command on a workstation running hundreds.
    """
    members: list[Member] = []
    if group_empty(pgid):
        return members
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid:
            members.append(Member(int(entry), fields[0].decode()))
    return members


def live_members(pgid: int) -> list[Member]:
    """Members of ``pgid`` that are not zombies."""
    return [m for m in group_members(pgid) if not m.zombie]


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Signal every member of ``pgid``; a group already gone is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def reap_group(pgid: int) -> int:
    """Reap exited members of ``pgid`` that are our children (adopted as subreaper).

    Only safe once no ``trio.Process`` of that group is waiting to be reaped by
    trio (its leader is reaped first), or the group is not ours at all.
    """
    reaped = 0
    while True:
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return reaped
        except OSError as exc:
            if exc.errno == errno.EINTR:
                continue
            return reaped
        if pid == 0:
            return reaped
        reaped += 1


@attrs.frozen(slots=True)
class KillReport:
    """What ``kill_group`` did and what (if anything) survived it."""

    sigkill_sent: bool
    survivors: tuple[int, ...]
    """Pids of the group still alive after SIGKILL (a process in uninterruptible sleep)."""
    zombies: tuple[int, ...]
    """Exited members nobody reaped (not our children: no subreaper)."""


async def _wait_until(predicate: Callable[[], bool], timeout: float, poll: float = 0.01) -> bool:
    if predicate():
        # The usual case right after a kill. No scope and no sleep: a mass cancel runs
        # this for every process group, and each scope costs the loop ~10 us.
        return True
    with trio.move_on_after(timeout):
        while not predicate():
            await trio.sleep(poll)
            poll = min(poll * 1.5, 0.1)
        return True
    return predicate()


async def _group_gone(process: trio.Process, timeout: float) -> bool:
    """Wait up to ``timeout`` until the leader has exited and no member of its group lives.

    The leader is waited for on its pidfd (``Process.wait``: woken by its exit, no
    polling, and it is reaped then); only members that outlive it are polled, and
    without a ``/proc`` scan once the group is empty.
    """
    pgid = process.pid
    deadline = trio.current_time() + timeout
    with trio.move_on_at(deadline):
        await process.wait()
    if process.returncode is None:
        return False
    left = max(0.0, deadline - trio.current_time())
    return await _wait_until(lambda: not live_members(pgid), left)


async def kill_group(
    process: trio.Process, *, grace: float = 1.0, kill_wait: float = 2.0
) -> KillReport:
    """SIGTERM the group, wait ``grace``, SIGKILL it, reap, verify. Shield it yourself.

    ``process`` must be the group leader (started with ``start_new_session``).
    Every wait is bounded: the whole call takes at most about
    ``grace + 2 * kill_wait`` seconds.
    """
    pgid = process.pid
    signal_group(pgid, signal.SIGTERM)
    sigkill = not await _group_gone(process, grace)
    if sigkill:
        signal_group(pgid, signal.SIGKILL)
        await _group_gone(process, kill_wait)
    if process.returncode is None:
        # Only when the leader outlived both waits: a second ``wait()`` costs two loop
        # passes (its lock, then a checkpoint) even for a process already reaped.
        with trio.move_on_after(kill_wait):
            await process.wait()
    if process.returncode is not None:
        # Only after the leader is reaped: waitpid(-pgid) must not steal it from trio.
        await _wait_until(lambda: _reaped_and_gone(pgid), 0.2)
    members = group_members(pgid)
    return KillReport(
        sigkill,
        tuple(m.pid for m in members if not m.zombie),
        tuple(m.pid for m in members if m.zombie),
    )


class OutputCapture:
    """Bytes from a pipe, bounded: the first ``head`` bytes and the last ``limit - head``."""

    def __init__(self, limit: int = 200_000, head: int = 20_000) -> None:
        self.limit = limit
        self.head_limit = min(head, limit)
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0
        self.dropped = 0

    def feed(self, data: bytes | bytearray) -> None:
        self.total += len(data)
        room = self.head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail += data
        excess = len(self._tail) - (self.limit - self.head_limit)
        if excess > 0:
            del self._tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if self.dropped:
            return f"{head}\n[... {self.dropped:,} bytes of output omitted ...]\n{tail}"
        return head + tail

    def recent(self, size: int = 2000) -> str:
        data = bytes(self._head + self._tail)[-size:]
        return data.decode("utf-8", errors="replace")

    def parts(self) -> tuple[bytes, bytes]:
        """The kept head and tail, raw (``dropped`` bytes were between them)."""
        return bytes(self._head), bytes(self._tail)


@attrs.define(slots=True, eq=False)
class Handover:
    """A running command offered to a new owner (see the module docstring)."""

    process: trio.Process
    stdout: trio.abc.ReceiveStream
    capture: OutputCapture
    """Its output so far (reading stopped: every later byte is the taker's)."""
    started: float
    """``trio.current_time()`` at its start."""
    taken: bool = False
    """Set (without an await in between) once the new owner has it."""


@attrs.frozen(slots=True)
class CommandResult:
    output: str
    exit_code: int | None
    """The leader's exit status; a signal N is reported as 128 + N, like a shell."""
    timed_out: bool = False
    interrupted: bool = False
    output_bytes: int = 0
    dropped_bytes: int = 0
    kill: KillReport | None = None
    duration: float = 0.0
    handed_over: bool = False
    """Still running, given to ``hand_over``'s taker (``exit_code`` is None)."""


def exit_status(returncode: int | None) -> int | None:
    """A wait status as a shell reports it: a signal N is 128 + N."""
    if returncode is None:
        return None
    return 128 - returncode if returncode < 0 else returncode


def group_empty(pgid: int) -> bool:
    """No process at all (not even a zombie) is left in ``pgid``; no ``/proc`` scan."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _reaped_and_gone(pgid: int) -> bool:
    reap_group(pgid)
    return not group_members(pgid)


async def _release(process: trio.Process, slot: GroupSlot) -> None:
    """Record the held group, then let its gate ``exec`` the command."""
    stdin = process.stdin
    assert stdin is not None  # started with stdin=PIPE
    await slot.started(process.pid)
    # A gate already gone (killed from outside) ran nothing; its exit is reported as usual.
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await stdin.send_all(GATE_LINE)
    await stdin.aclose()


async def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    interrupt: Bell | None = None,
    capture: OutputCapture | None = None,
    on_output: Callable[[OutputCapture], None] | None = None,
    grace: float = 1.0,
    cancel_grace: float = 0.2,
    drain_timeout: float = 1.0,
    slot: GroupSlot | None = None,
    yield_to: Bell | None = None,
    hand_over: Callable[[Handover], Awaitable[None]] | None = None,
) -> CommandResult:
    """Run ``argv`` in its own process group (see the module docstring).

    ``grace`` is the SIGTERM-to-SIGKILL wait after a timeout or an interrupt;
    ``cancel_grace`` the shorter one when the caller is cancelled (a hard stop
    means now, and its cleanup must fit in the runtime's kill grace).
    ``on_output`` is called after every chunk read (it must not block).
    ``slot``: record the group there before the command runs (held by a gate
    until then), and drop the record once the group is reaped (or taken).
    ``yield_to`` / ``hand_over``: see the module docstring; ``hand_over`` sets
    ``taken`` when the process is no longer ours and must not raise but
    ``trio.Cancelled``.
    Raises ``OSError`` when the program cannot be started, ``GroupNotRecorded``
    (the command never ran) when ``slot`` could not record it.
    """
    enable_subreaper()
    out = capture or OutputCapture()
    started = trio.current_time()
    process = await trio.lowlevel.open_process(
        gated(argv) if slot is not None else list(argv),
        stdin=subprocess.PIPE if slot is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=str(cwd),
        env=dict(env),
        start_new_session=True,
        umask=user_umask(),  # the user's, not the daemon's private 0077
    )
    pgid = process.pid
    stdout = process.stdout
    if stdout is None:  # pragma: no cover - PIPE always gives a stream
        raise RuntimeError("no stdout pipe")
    timed_out = interrupted = yielded = False
    report: KillReport | None = None
    reader_done = trio.Event()
    handover: Handover | None = None

    async def read(scope: trio.CancelScope) -> None:
        try:
            with scope:
                while chunk := await stdout.receive_some(65536):
                    out.feed(chunk)
                    if on_output is not None:
                        on_output(out)
        finally:
            reader_done.set()

    try:
        if slot is not None:
            await _release(process, slot)
        async with trio.open_nursery() as nursery:
            reading = trio.CancelScope()
            nursery.start_soon(read, reading)
            yields = yield_to if hand_over is not None else None
            deadline = trio.CancelScope(deadline=started + timeout)
            with cancelled_by(deadline, interrupt, yields) as waiting:  # a ring ends it
                await process.wait()
            if waiting.cancelled_caught:
                interrupted = interrupt is not None and interrupt.is_set()
                yielded = not interrupted and yields is not None and yields.is_set()
            timed_out = waiting.cancelled_caught and not interrupted and not yielded
            if yielded and not interrupted and hand_over is not None and process.returncode is None:
                reading.cancel()  # a cancelled receive consumed nothing: the rest is the taker's
                await reader_done.wait()
                handover = Handover(process, stdout, out, started)
                await hand_over(handover)
                if not handover.taken:  # refused: it dies as on an interrupt
                    interrupted = True
                    reader_done = trio.Event()
                    nursery.start_soon(read, trio.CancelScope())
            if handover is None or not handover.taken:
                with trio.CancelScope(shield=True):
                    if process.returncode is None or live_members(pgid):
                        # Timed out, interrupted, or the leader left members behind (cmd &).
                        report = await kill_group(process, grace=grace)
                    else:
                        await _wait_until(lambda: _reaped_and_gone(pgid), 0.2)
                with trio.move_on_after(drain_timeout):
                    await reader_done.wait()
            nursery.cancel_scope.cancel()
    except BaseException:
        taken = handover is not None and handover.taken
        if not taken and (process.returncode is None or live_members(pgid)):
            with trio.move_on_after(cancel_grace + 5.0, shield=True):
                await kill_group(process, grace=cancel_grace)
        raise
    finally:
        taken = handover is not None and handover.taken
        with trio.move_on_after(1.0, shield=True):
            if not taken:  # a taken pipe is read by its new owner
                await stdout.aclose()
            if process.stdin is not None:
                await process.stdin.aclose()
        gone = process.returncode is not None and not live_members(pgid)
        if slot is not None and (taken or gone):
            with trio.move_on_after(1.0, shield=True):
                await slot.reaped()  # a group left alive keeps it; a taken one has the taker's
    handed = handover is not None and handover.taken
    return CommandResult(
        output=out.text(),
        exit_code=None if handed else exit_status(process.returncode),
        timed_out=timed_out,
        interrupted=interrupted,
        output_bytes=out.total,
        dropped_bytes=out.dropped,
        kill=report,
        duration=trio.current_time() - started,
        handed_over=handed,
    )
