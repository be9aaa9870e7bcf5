"""What the store hands back, and its configuration: frozen attrs classes."""

from __future__ import annotations

import math
from typing import Literal

import attrs

from hermes.model.types import Message, Role, Usage


@attrs.frozen(slots=True)
class SessionInfo:
    """One row of the sessions table. Times are wall-clock seconds since the epoch."""

    id: str
    parent_id: str | None
    title: str | None
    model: str
    created_at: float
    updated_at: float
    ended_at: float | None
    end_reason: str | None
    message_count: int
    """Also the ``seq`` the next appended message gets (seqs start at 0)."""
    usage: Usage
    """Token usage accumulated over the session's model calls."""
    archive_of: str | None = None
    """Set on an archive: the rows a compaction of that (live) session replaced."""

    @property
    def ended(self) -> bool:
        return self.ended_at is not None


@attrs.frozen(slots=True)
class Transcript:
    """A session as stored: enough to resume it."""

    session: SessionInfo
    messages: tuple[Message, ...]
    open_tool_uses: tuple[str, ...]
    """Ids of tool_use blocks that have no tool_result yet, in transcript order.

    Non-empty only when the last step was in flight (a crash mid tool batch);
    the session gives them results before the next model request.
    """

    @property
    def next_seq(self) -> int:
        return len(self.messages)


@attrs.frozen(slots=True)
class AppendResult:
    """Where an append (or a replacement of the last message) landed."""

    session_id: str
    first_seq: int
    next_seq: int
    replayed: bool = False
    """True if an identical append with the same ``expected_seq`` had already landed
    (a retry after a timeout): nothing was written twice."""


@attrs.frozen(slots=True)
class SearchHit:
    """One message matching a full-text search."""

    session_id: str
    seq: int
    role: Role
    snippet: str
    """The best-matching fragment, matches wrapped in the request's markers."""
    score: float
    """Relevance (negated BM25): higher is better; hits come best first."""
    archive_id: str | None = None
    """Set when the hit is in rows a compaction replaced: the archive holding them
    (``session_id`` is then the live session it belongs to)."""


@attrs.frozen(slots=True)
class StoreConfig:
    """How the store opens its database."""

    filename: str = "hermes.db"
    """The database file inside the store's directory."""
    synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    """``NORMAL``: a committed write survives a crash of the process; a power loss
    may lose the last transactions (never corrupts). ``FULL`` fsyncs every commit."""
    busy_timeout: float = 1.0
    """Seconds to wait for a lock held by another process (a reader or a CLI)."""
    max_size_bytes: int | None = None
    """Refuse to grow the database beyond this size (writes then fail as 'full')."""

    def __attrs_post_init__(self) -> None:
        if not self.filename or "/" in self.filename or self.filename in (".", ".."):
            raise ValueError(
                f"StoreConfig.filename must be a plain file name, got {self.filename!r}"
            )
        if self.synchronous not in ("NORMAL", "FULL"):
            raise ValueError(
                f"StoreConfig.synchronous must be 'NORMAL' or 'FULL', got {self.synchronous!r}"
            )
        if not (isinstance(self.busy_timeout, int | float) and 0 <= self.busy_timeout < math.inf):
            raise ValueError(f"StoreConfig.busy_timeout must be >= 0, got {self.busy_timeout!r}")
        if self.max_size_bytes is not None and self.max_size_bytes <= 0:
            raise ValueError(f"StoreConfig.max_size_bytes must be > 0, got {self.max_size_bytes!r}")


ProcessRecordStatus = Literal["running", "exited", "killed", "lost"]
PROCESS_STATUSES: tuple[ProcessRecordStatus, ...] = ("running", "exited", "killed", "lost")


@attrs.frozen(slots=True, kw_only=True)
class ProcessRecord:
    """One background process as checkpointed (``hermes.processes``); times are wall clock.

    ``start_time`` is field 22 of ``/proc/<pid>/stat`` (clock ticks after boot)
    and ``boot_id`` the kernel's boot id: together with ``pid`` they tell the
    process apart from a later one that reuses its pid. ``owner_pid`` and
    ``owner_start_time`` name the daemon process whose registry owns it.
    A row with ``tool_use_id`` is a foreground tool command's process group
    (``hermes.processes.foreground``), not a background process.
    """

    id: str
    session_id: str
    command: str
    cwd: str
    pid: int
    pgid: int
    start_time: int
    boot_id: str
    owner_pid: int
    owner_start_time: int
    status: ProcessRecordStatus = "running"
    exit_code: int | None = None
    started_at: float = 0.0
    finished_at: float | None = None
    tool_use_id: str | None = None
    """The tool call whose foreground command this group runs (None: a background process)."""

    @property
    def active(self) -> bool:
        """Recorded as running: its owner has not seen it finish."""
        return self.status == "running"

    @property
    def foreground(self) -> bool:
        """A foreground tool command's group, recorded for crash recovery only."""
        return self.tool_use_id is not None


DelegationStatus = Literal["running", "finished", "delivered"]
DELEGATION_STATUSES: tuple[DelegationStatus, ...] = ("running", "finished", "delivered")


@attrs.frozen(slots=True, kw_only=True)
class DelegationRecord:
    """One background delegation of a session (``hermes.subagents``); times are wall clock.

    ``running`` until its batch ends, then ``finished`` with the ``result`` text
    the parent is to get as input, then ``delivered`` once a turn took it. A
    restarted daemon delivers ``finished`` ones again and reports ``running``
    ones (their children died with the old daemon) as lost.
    """

    id: str
    session_id: str
    goals: str
    status: DelegationStatus = "running"
    result: str | None = None
    created_at: float = 0.0
    finished_at: float | None = None
    delivered_at: float | None = None


@attrs.frozen(slots=True)
class CompactionRecord:
    """One compaction of a session's transcript (``compactions`` row)."""

    id: int
    session_id: str
    archive_id: str
    """The archive session holding the rows the compaction replaced, unchanged."""
    created_at: float
    method: str
    """How the summary was made: ``model``, ``static`` (fallback) or ``prune`` (no summary)."""
    focus: str | None
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
