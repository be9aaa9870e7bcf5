"""A background process's live state, and the snapshots and results handed to callers.

``ProcessState`` is shared by exactly two actors on one trio thread: the
process's watcher writes it (output, status, exit code), the registry that
owns the watcher reads it to answer list, poll, log and wait at once, even
while the watcher is busy killing. Each field has one writer (the registry
writes only ``exit_seen``), and nothing awaits between reading and using a
field, so no lock is needed. Callers never see the state itself: they get
frozen ``ProcessInfo`` snapshots.
"""

from __future__ import annotations

import enum
import time

import attrs
import trio

from .buffer import OutputBuffer, Page


class ProcessStatus(enum.Enum):
    RUNNING = "running"
    EXITED = "exited"
    """The process ended on its own; ``exit_code`` says how."""
    KILLED = "killed"
    """Stopped by a kill request, or because its registry stopped."""
    LOST = "lost"
    """Found dead (or its pid recycled) after a daemon restart: outcome unknown."""

    @property
    def finished(self) -> bool:
        return self is not ProcessStatus.RUNNING


@attrs.frozen(slots=True, kw_only=True)
class ProcessInfo:
    """A snapshot of one process, as ``list``, ``poll``, ``log`` and ``wait`` return it."""

    id: str
    session_id: str
    command: str
    cwd: str
    status: ProcessStatus
    pid: int
    pgid: int
    exit_code: int | None
    """A shell's exit status (a signal N is 128 + N); None while running or when unknown."""
    started_at: float
    """Wall clock."""
    finished_at: float | None
    runtime: float
    """Seconds it has run (or ran)."""
    output_chars: int
    """Characters of output so far (the offset the next one will get)."""
    adopted: bool
    """Adopted after a daemon restart: running, but its output and stdin were lost."""
    stdin_open: bool
    watch_patterns: tuple[str, ...]
    watching: bool
    """Pattern watching is active."""
    notify_on_complete: bool
    note: str | None
    """What else happened: watching disabled, leftovers killed, survivors..."""

    @property
    def finished(self) -> bool:
        return self.status.finished


@attrs.define(slots=True, eq=False, kw_only=True)
class ProcessState:
    """The live state of one process (see the module docstring for who writes what)."""

    id: str
    session_id: str
    command: str
    cwd: str
    buffer: OutputBuffer
    watch_patterns: tuple[str, ...] = ()
    notify_on_complete: bool = False
    started_at: float = attrs.field(factory=time.time)
    started_clock: float = attrs.field(factory=trio.current_time)
    pid: int = 0
    pgid: int = 0
    start_time: int = 0
    status: ProcessStatus = ProcessStatus.RUNNING
    exit_code: int | None = None
    finished_at: float | None = None
    finished_clock: float | None = None
    adopted: bool = False
    stdin_open: bool = True
    watching: bool = False
    pattern_notices: int = 0
    notes: list[str] = attrs.field(factory=list)
    exit_seen: bool = False
    """A caller saw the exit (poll, log, wait): the completion notice is then skipped."""

    @property
    def finished(self) -> bool:
        return self.status.finished

    def runtime(self, now: float) -> float:
        end = self.finished_clock if self.finished_clock is not None else now
        return max(0.0, end - self.started_clock)

    def finish(self, status: ProcessStatus, exit_code: int | None) -> None:
        """Record the end (once; later calls change nothing)."""
        if self.finished:
            return
        self.status = status
        self.exit_code = exit_code
        self.finished_at = time.time()
        self.finished_clock = trio.current_time()
        self.stdin_open = False
        self.watching = False

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def info(self, now: float | None = None) -> ProcessInfo:
        at = trio.current_time() if now is None else now
        return ProcessInfo(
            id=self.id,
            session_id=self.session_id,
            command=self.command,
            cwd=self.cwd,
            status=self.status,
            pid=self.pid,
            pgid=self.pgid,
            exit_code=self.exit_code,
            started_at=self.started_at,
            finished_at=self.finished_at,
            runtime=self.runtime(at),
            output_chars=self.buffer.end,
            adopted=self.adopted,
            stdin_open=self.stdin_open,
            watch_patterns=self.watch_patterns,
            watching=self.watching,
            notify_on_complete=self.notify_on_complete,
            note="; ".join(self.notes) or None,
        )


@attrs.frozen(slots=True)
class PollResult:
    info: ProcessInfo
    tail: str
    """The last ``poll_tail`` (1,000) characters of output."""


@attrs.frozen(slots=True)
class LogResult:
    info: ProcessInfo
    page: Page


class WaitOutcome(enum.Enum):
    """How a ``wait`` ended: the process finished, the time ran out, or the turn was
    interrupted or redirected (the process keeps running in the last three)."""

    FINISHED = "finished"
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"
    REDIRECTED = "redirected"


@attrs.frozen(slots=True)
class WaitResult:
    info: ProcessInfo
    tail: str
    outcome: WaitOutcome
