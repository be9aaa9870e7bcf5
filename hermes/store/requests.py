"""The store actor's mailbox: one frozen attrs class per request, and their shapes.

Every request is sent with ``call`` (``StoreClient.request``, with a timeout).
Three shapes: a ``Request`` is a write that may move a transcript's end; a
``SideWrite`` leaves transcripts and the session rows' length and end alone
(the tail cache keeps its entries); a ``Read`` carries the caller's
``deadline`` (trio time) so that the store stops a query nobody is waiting for
any more. Writes are committed before the reply. Each request type's query
function is registered with ``operations.operation``; a table's own requests
may live beside its SQL (``event_queries``, ``flag_queries``, ``cron_queries``).
The one exception is ``Unattended``: a write a writer being torn down sends
with ``cast`` and does not wait for (``StoreClient.submit``); the store logs
its failure, since nobody else would hear of it.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, TypeVar

import attrs

from actors import Call
from hermes.model.types import Message, Usage

from .records import (
    AppendResult,
    CompactionRecord,
    DelegationRecord,
    ProcessRecord,
    ProcessRecordStatus,
    SearchHit,
    SessionInfo,
    Transcript,
)

R_co = TypeVar("R_co", covariant=True)


@attrs.frozen(slots=True)
class Unattended:
    """A write sent with ``cast``: nobody waits for it, and the store logs its failure."""

    request: Request[Any]


@attrs.frozen(slots=True)
class Request(Call[R_co]):
    """Base of every store request; ``op`` names it in errors, ``R_co`` is its reply's type."""

    op: ClassVar[str] = "request"
    writes: ClassVar[bool] = True
    moves_tails: ClassVar[bool] = True
    """A write that may change where a transcript ends or whether its session is
    open: the store's ``TailCache`` forgets the session first. False for writes
    that leave messages and the session row's length and end alone."""

    def messages_written(self) -> int:
        """How many messages this request queues for the full-text index."""
        return 0


@attrs.frozen(slots=True)
class SideWrite(Request[R_co]):
    """A write beside the transcripts (rows of processes, delegations, events, flags,
    cron jobs; titles, usage): it leaves every transcript's end alone."""

    moves_tails: ClassVar[bool] = False


@attrs.frozen(slots=True)
class Read(Request[R_co]):
    """A read: one consistent snapshot, in the worker thread, stopped at ``deadline``."""

    writes: ClassVar[bool] = False
    moves_tails: ClassVar[bool] = False
    deadline: float = attrs.field(default=math.inf, kw_only=True)
    """Trio time after which the store stops the query (``StoreClient.request``
    sets it from the call's timeout)."""


# -- writes ----------------------------------------------------------------------------


@attrs.frozen(slots=True)
class CreateSession(Request[SessionInfo]):
    op: ClassVar[str] = "create_session"

    model: str
    title: str | None = None
    parent_id: str | None = None
    session_id: str | None = None
    """Use this id; by default the store makes one (``YYYYmmdd-HHMMSS-<hex>``)."""


@attrs.frozen(slots=True)
class ClaimWriter(SideWrite[int]):
    """Make the caller the session's only transcript writer: a new writer epoch.

    Returns the epoch; a write that carries an older one (``writer=``) is refused
    with ``StaleWriter``. Its owner claims it when it opens the session and again
    when it leaves a writer behind (a turn that outlived its stop), so the old
    writer cannot write over the transcript it carries on with. A write that
    carries no epoch is not checked.
    """

    op: ClassVar[str] = "claim_writer"

    session_id: str


@attrs.frozen(slots=True)
class AppendMessages(Request[AppendResult]):
    op: ClassVar[str] = "append"

    session_id: str
    messages: tuple[Message, ...]
    expected_seq: int | None = None
    """The seq the first message must get; a mismatch is a ``SeqConflict`` unless the
    same messages are already stored there (then the append is acknowledged)."""
    usage: Usage | None = None
    """Added to the session's usage in the same transaction."""
    writer: int | None = attrs.field(default=None, kw_only=True)
    """The writer epoch it writes under (``ClaimWriter``): an old one is a ``StaleWriter``."""

    def messages_written(self) -> int:
        return len(self.messages)


@attrs.frozen(slots=True)
class ReplaceLast(Request[AppendResult]):
    op: ClassVar[str] = "replace_last"

    session_id: str
    seq: int
    """Must be the seq of the session's last message."""
    message: Message
    usage: Usage | None = None
    writer: int | None = attrs.field(default=None, kw_only=True)
    """The writer epoch it writes under (``ClaimWriter``): an old one is a ``StaleWriter``."""

    def messages_written(self) -> int:
        return 1


@attrs.frozen(slots=True)
class Truncate(Request[int]):
    op: ClassVar[str] = "truncate"

    session_id: str
    keep: int
    """How many messages to keep: the ones with ``seq < keep``."""
    writer: int | None = attrs.field(default=None, kw_only=True)
    """The writer epoch it writes under (``ClaimWriter``): an old one is a ``StaleWriter``."""


@attrs.frozen(slots=True)
class IndexPending(SideWrite[int]):
    """Add the messages waiting in ``fts_pending`` to the full-text index; returns how many.

    The store sends it itself (before a search, and once enough rows wait);
    it runs in the connection's worker thread, never on the loop.
    """

    op: ClassVar[str] = "index_pending"


@attrs.frozen(slots=True)
class Compact(Request[CompactionRecord]):
    """Replace a session's whole transcript with a compacted one, keeping the old rows.

    The old rows move to a new archive session (``archive_of`` = this one),
    the new transcript is written from seq 0 and the compaction is recorded,
    all in one transaction.
    """

    op: ClassVar[str] = "compact"

    session_id: str
    expected_count: int
    """The transcript length the compaction was planned on (else ``SeqConflict``)."""
    messages: tuple[Message, ...]
    method: str
    focus: str | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    usage: Usage | None = None
    """What the summary call cost, added to the session's usage in the same transaction."""
    writer: int | None = attrs.field(default=None, kw_only=True)
    """The writer epoch it writes under (``ClaimWriter``): an old one is a ``StaleWriter``."""

    def messages_written(self) -> int:
        return len(self.messages)


@attrs.frozen(slots=True)
class AddUsage(SideWrite[SessionInfo]):
    op: ClassVar[str] = "add_usage"

    session_id: str
    usage: Usage


@attrs.frozen(slots=True)
class SetTitle(SideWrite[SessionInfo]):
    op: ClassVar[str] = "set_title"

    session_id: str
    title: str | None


@attrs.frozen(slots=True)
class EndSession(Request[SessionInfo]):
    op: ClassVar[str] = "end_session"

    session_id: str
    reason: str


@attrs.frozen(slots=True)
class EndSessions(Request[tuple[str, ...]]):
    """Mark many sessions ended in one transaction (a mass cancel of subagents)."""

    op: ClassVar[str] = "end_sessions"

    session_ids: tuple[str, ...]
    reason: str


@attrs.frozen(slots=True)
class ReopenSession(Request[SessionInfo]):
    op: ClassVar[str] = "reopen_session"

    session_id: str


# -- reads -----------------------------------------------------------------------------


@attrs.frozen(slots=True)
class GetSession(Read[SessionInfo]):
    op: ClassVar[str] = "get_session"

    session_id: str


@attrs.frozen(slots=True)
class LoadSession(Read[Transcript]):
    op: ClassVar[str] = "load"

    session_id: str


@attrs.frozen(slots=True)
class ListSessions(Read[list[SessionInfo]]):
    op: ClassVar[str] = "list_sessions"

    limit: int = 50
    parent_id: str | None = None
    """Only the children of this session."""
    include_ended: bool = True


@attrs.frozen(slots=True)
class Search(Read[list[SearchHit]]):
    op: ClassVar[str] = "search"

    query: str
    limit: int = 20
    session_id: str | None = None
    """Search this session only."""
    raw: bool = False
    """Pass ``query`` to FTS5 as is (AND/OR/NOT, NEAR, "phrases", prefix*);
    by default every word must occur, in any order."""
    before: str = "["
    after: str = "]"
    """Markers around matched words in snippets."""


# -- background processes (the crash checkpoint of hermes.processes) ------------------


@attrs.frozen(slots=True)
class RecordProcessStart(SideWrite[ProcessRecord]):
    """Insert a process row (status ``running``); its id must be new."""

    op: ClassVar[str] = "record_process_start"

    record: ProcessRecord


@attrs.frozen(slots=True)
class RecordProcessFinish(SideWrite[ProcessRecord]):
    """Mark a running process ``exited``, ``killed`` or ``lost``; a no-op if already finished."""

    op: ClassVar[str] = "record_process_finish"

    process_id: str
    status: ProcessRecordStatus
    exit_code: int | None = None


@attrs.frozen(slots=True)
class ClaimProcess(SideWrite[ProcessRecord]):
    """Make this daemon process the owner of a running process (adoption after a restart)."""

    op: ClassVar[str] = "claim_process"

    process_id: str
    owner_pid: int
    owner_start_time: int
    session_id: str | None = None
    """Also move the row to this session (a subagent handed the process to its parent)."""


@attrs.frozen(slots=True)
class ForgetProcess(SideWrite[bool]):
    """Delete a process row (a foreground command's, once its group is reaped); a no-op if none."""

    op: ClassVar[str] = "forget_process"

    process_id: str


@attrs.frozen(slots=True)
class ListProcesses(Read[list[ProcessRecord]]):
    """Process rows, oldest first: one session's or all, optionally only running ones.

    ``foreground``: only foreground commands' groups (True), only background
    processes (False), or both (None).
    """

    op: ClassVar[str] = "list_processes"

    session_id: str | None = None
    active_only: bool = False
    limit: int = 1000
    foreground: bool | None = None


# -- background delegations (hermes.subagents) ------------------------------------------


@attrs.frozen(slots=True)
class RecordDelegationStart(SideWrite[DelegationRecord]):
    """Insert a delegation row (status ``running``); its id must be new."""

    op: ClassVar[str] = "record_delegation_start"

    delegation_id: str
    session_id: str
    goals: str


@attrs.frozen(slots=True)
class RecordDelegationFinish(SideWrite[DelegationRecord]):
    """Mark a running delegation ``finished`` with its result; a no-op once finished."""

    op: ClassVar[str] = "record_delegation_finish"

    delegation_id: str
    result: str


@attrs.frozen(slots=True)
class RecordDelegationDelivered(SideWrite[DelegationRecord]):
    """Mark a finished delegation ``delivered`` (a turn took its result); idempotent."""

    op: ClassVar[str] = "record_delegation_delivered"

    delegation_id: str


@attrs.frozen(slots=True)
class ListCompactions(Read[list[CompactionRecord]]):
    """A session's compactions, oldest first."""

    op: ClassVar[str] = "list_compactions"

    session_id: str
    limit: int = 1000


@attrs.frozen(slots=True)
class ListDelegations(Read[list[DelegationRecord]]):
    """A session's delegation rows, oldest first; only undelivered ones if ``pending_only``."""

    op: ClassVar[str] = "list_delegations"

    session_id: str
    pending_only: bool = False
    limit: int = 1000
