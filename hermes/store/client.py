"""``StoreClient``: typed calls to the store actor, each with a timeout.

The client works with anything that has ``call(message, timeout)``: an
``ActorRef`` or a supervisor's ``ChildHandle`` (which survives restarts).
Every failure comes out as a ``StoreError``: the runtime's ``CallTimeout``
becomes ``StoreTimeout`` and a dead store ``StoreUnavailable``, with the
original chained as ``__cause__``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TypeVar, cast

import attrs
import trio

from actors import (
    ActorContext,
    ActorExited,
    ActorRef,
    ActorSystem,
    CallTimeout,
    MailboxFull,
    StartFailed,
)
from actors import (
    CallTarget as _CallTarget,
)
from hermes.model.types import Message, Usage

from .actor import StoreActor, StoreLane
from .errors import StoreError, StoreTimeout, StoreUnavailable
from .records import (
    AppendResult,
    CompactionRecord,
    DelegationRecord,
    ProcessRecord,
    ProcessRecordStatus,
    SearchHit,
    SessionInfo,
    StoreConfig,
    Transcript,
)
from .requests import (
    AddUsage,
    AppendMessages,
    ClaimProcess,
    ClaimWriter,
    Compact,
    CreateSession,
    EndSession,
    EndSessions,
    ForgetProcess,
    GetSession,
    ListCompactions,
    ListDelegations,
    ListProcesses,
    ListSessions,
    LoadSession,
    Read,
    RecordDelegationDelivered,
    RecordDelegationFinish,
    RecordDelegationStart,
    RecordProcessFinish,
    RecordProcessStart,
    ReopenSession,
    ReplaceLast,
    Request,
    Search,
    Truncate,
    Unattended,
)

DEFAULT_TIMEOUT = 5.0


CallTarget = _CallTarget
"""What the client sends to: an ``ActorRef`` or a ``ChildHandle`` (``actors.CallTarget``)."""

R = TypeVar("R")


class StoreClient:
    """Typed requests to a ``StoreActor``: ``request(SomeRequest(...))`` answers the
    request's reply type (``Request[R]`` -> ``R``) for every operation.

    The named methods below are thin conveniences kept for the operations that
    many call sites across the daemon use (or whose arguments they shape, such
    as ``append`` taking one message or several); each is one ``request``. An
    operation gets no method of its own: the flag, cron and event operations,
    ``SetTitle``, and any new one are sent with ``request``.

    ``timeout`` is the default of every call (seconds); each method takes its
    own ``timeout`` too. A write that times out may still be committed: retry
    an ``append`` with the same ``expected_seq`` (acknowledged, not repeated, if
    it landed), or ``load`` to see.
    """

    def __init__(
        self,
        target: CallTarget,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        lane: StoreLane | None = None,
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.target = target
        self.timeout = float(timeout)
        self.lane = lane
        """The store's lane, if it has one: small writes skip the mailbox while it is idle."""

    async def request(self, request: Request[R], timeout: float | None = None) -> R:
        """Send any store request and return its reply, typed by the request
        (``StoreError`` on failure)."""
        if self.lane is not None and request.writes:
            await trio.lowlevel.checkpoint_if_cancelled()
            done = await self.lane.run(request)
            if done is not None:
                return cast(R, done.unwrap())  # the lane ran this very request
        limit = self.timeout if timeout is None else timeout
        if isinstance(request, Read):
            request = attrs.evolve(request, deadline=trio.current_time() + limit)
        session_id = getattr(request, "session_id", None)
        try:
            return await self.target.call(request, timeout=limit)
        except CallTimeout as exc:
            unknown = " (the write may still have been committed)" if request.writes else ""
            raise StoreTimeout(
                request.op, f"no answer within {limit:g}s{unknown}", session_id=session_id
            ) from exc
        except ActorExited as exc:
            raise StoreUnavailable(
                request.op,
                f"the store actor is not running ({exc.reason.describe()})",
                session_id=session_id,
            ) from exc
        except MailboxFull as exc:
            raise StoreUnavailable(request.op, f"the store is overloaded: {exc}") from exc

    def submit(self, request: Request[Any]) -> bool:
        """Queue a write without waiting for it; the store logs it if it fails.

        For a writer being torn down (a killed turn's partial text, a stopped
        watcher's end), whose next step would only be to wait for the reply. The
        write runs in order with everything else the store was sent. False if it
        could not be queued now (the store's mailbox is full or it is not running,
        or the target is not a plain actor ref): make the call instead.
        """
        if not request.writes:
            raise ValueError(f"only writes may be submitted unattended, not {request.op}")
        target = self.target
        if not isinstance(target, ActorRef):
            return False
        try:
            return target.cast_nowait(Unattended(request))
        except MailboxFull:
            return False

    def submit_append(
        self, session_id: str, message: Message, *, expected_seq: int, writer: int | None = None
    ) -> bool:
        """``append`` one message without waiting (see ``submit``)."""
        return self.submit(
            AppendMessages(session_id, (message,), expected_seq, None, writer=writer)
        )

    def submit_process_finish(
        self, process_id: str, status: ProcessRecordStatus, exit_code: int | None = None
    ) -> bool:
        """``record_process_finish`` without waiting (see ``submit``)."""
        return self.submit(RecordProcessFinish(process_id, status, exit_code))

    def submit_forget_process(self, process_id: str) -> bool:
        """``forget_process`` without waiting (see ``submit``)."""
        return self.submit(ForgetProcess(process_id))

    # -- writes --------------------------------------------------------------------------

    async def create_session(
        self,
        *,
        model: str,
        title: str | None = None,
        parent_id: str | None = None,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> SessionInfo:
        """Create a session (a subagent's names its ``parent_id``); returns its row."""
        return await self.request(CreateSession(model, title, parent_id, session_id), timeout)

    async def append(
        self,
        session_id: str,
        messages: Message | Sequence[Message],
        *,
        expected_seq: int | None = None,
        usage: Usage | None = None,
        writer: int | None = None,
        timeout: float | None = None,
    ) -> AppendResult:
        """Append messages (durable when this returns) and add ``usage``, in one transaction.

        ``writer``: the writer epoch it writes under (``claim_writer``), checked if given.
        """
        batch = (messages,) if isinstance(messages, Message) else tuple(messages)
        request = AppendMessages(session_id, batch, expected_seq, usage, writer=writer)
        return await self.request(request, timeout)

    async def claim_writer(self, session_id: str, *, timeout: float | None = None) -> int:
        """A new writer epoch for the session's transcript: writes under older ones are
        refused from now on (``StaleWriter``)."""
        return await self.request(ClaimWriter(session_id), timeout)

    async def replace_last(
        self,
        session_id: str,
        seq: int,
        message: Message,
        *,
        usage: Usage | None = None,
        writer: int | None = None,
        timeout: float | None = None,
    ) -> AppendResult:
        """Rewrite the last message (seq ``seq``), e.g. a tool-results message as results land."""
        request = ReplaceLast(session_id, seq, message, usage, writer=writer)
        return await self.request(request, timeout)

    async def truncate(
        self,
        session_id: str,
        keep: int,
        *,
        writer: int | None = None,
        timeout: float | None = None,
    ) -> int:
        """Drop the messages from seq ``keep`` on (a rolled-back turn); returns how many."""
        return await self.request(Truncate(session_id, keep, writer=writer), timeout)

    async def compact(
        self,
        session_id: str,
        expected_count: int,
        messages: Sequence[Message],
        *,
        method: str,
        focus: str | None = None,
        tokens_before: int = 0,
        tokens_after: int = 0,
        usage: Usage | None = None,
        writer: int | None = None,
        timeout: float | None = None,
    ) -> CompactionRecord:
        """Replace the transcript (planned on ``expected_count`` rows) with ``messages``.

        The old rows are kept in an archive session (see ``compaction_queries``).
        """
        request = Compact(
            session_id,
            expected_count,
            tuple(messages),
            method,
            focus,
            tokens_before,
            tokens_after,
            usage,
            writer=writer,
        )
        return await self.request(request, timeout)

    async def add_usage(
        self, session_id: str, usage: Usage, *, timeout: float | None = None
    ) -> SessionInfo:
        return await self.request(AddUsage(session_id, usage), timeout)

    async def end_session(
        self, session_id: str, reason: str, *, timeout: float | None = None
    ) -> SessionInfo:
        """Mark the session ended with ``reason``; its transcript then refuses writes."""
        return await self.request(EndSession(session_id, reason), timeout)

    async def end_sessions(
        self, session_ids: Sequence[str], reason: str, *, timeout: float | None = None
    ) -> tuple[str, ...]:
        """Mark every still-open session of ``session_ids`` ended, in one transaction.

        Unknown and already-ended ids are skipped; returns the ids it ended.
        """
        return await self.request(EndSessions(tuple(session_ids), reason), timeout)

    async def reopen_session(self, session_id: str, *, timeout: float | None = None) -> SessionInfo:
        return await self.request(ReopenSession(session_id), timeout)

    # -- reads ---------------------------------------------------------------------------

    async def get_session(self, session_id: str, *, timeout: float | None = None) -> SessionInfo:
        return await self.request(GetSession(session_id), timeout)

    async def load(self, session_id: str, *, timeout: float | None = None) -> Transcript:
        """The session and its messages, exactly as appended, to resume it."""
        return await self.request(LoadSession(session_id), timeout)

    async def list_sessions(
        self,
        *,
        limit: int = 50,
        parent_id: str | None = None,
        include_ended: bool = True,
        timeout: float | None = None,
    ) -> list[SessionInfo]:
        """Sessions, most recently updated first (only ``parent_id``'s children if given)."""
        return await self.request(ListSessions(limit, parent_id, include_ended), timeout)

    async def search(
        self,
        query: str,
        *,
        limit: int = 20,
        session_id: str | None = None,
        raw: bool = False,
        markers: tuple[str, str] = ("[", "]"),
        timeout: float | None = None,
    ) -> list[SearchHit]:
        """Full-text search over every session (or one), best match first."""
        return await self.request(
            Search(query, limit, session_id, raw, markers[0], markers[1]), timeout
        )

    # -- background processes (crash checkpoint) -----------------------------------------

    async def list_compactions(
        self, session_id: str, *, limit: int = 1000, timeout: float | None = None
    ) -> list[CompactionRecord]:
        """A session's compactions, oldest first."""
        return await self.request(ListCompactions(session_id, limit), timeout)

    async def record_process_start(
        self, record: ProcessRecord, *, timeout: float | None = None
    ) -> ProcessRecord:
        """Checkpoint a started process (durable when this returns)."""
        return await self.request(RecordProcessStart(record), timeout)

    async def record_process_finish(
        self,
        process_id: str,
        status: ProcessRecordStatus,
        exit_code: int | None = None,
        *,
        timeout: float | None = None,
    ) -> ProcessRecord:
        """Checkpoint a finished process (``exited``, ``killed`` or ``lost``); idempotent."""
        return await self.request(RecordProcessFinish(process_id, status, exit_code), timeout)

    async def claim_process(
        self,
        process_id: str,
        owner_pid: int,
        owner_start_time: int,
        *,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> ProcessRecord:
        """Record this daemon process as the owner of a running process (adoption);
        with ``session_id`` the row moves to that session too (a hand-off)."""
        return await self.request(
            ClaimProcess(process_id, owner_pid, owner_start_time, session_id), timeout
        )

    async def forget_process(self, process_id: str, *, timeout: float | None = None) -> bool:
        """Delete a process row (a foreground command's, its group reaped); whether it existed."""
        return await self.request(ForgetProcess(process_id), timeout)

    async def list_processes(
        self,
        *,
        session_id: str | None = None,
        active_only: bool = False,
        limit: int = 1000,
        foreground: bool | None = None,
        timeout: float | None = None,
    ) -> list[ProcessRecord]:
        """Process rows, oldest first (one session's, or all; only running ones if asked;
        only foreground commands' groups, or only background processes, if asked)."""
        return await self.request(
            ListProcesses(session_id, active_only, limit, foreground=foreground), timeout
        )

    # -- background delegations (hermes.subagents) ----------------------------------------

    async def record_delegation_start(
        self, delegation_id: str, session_id: str, goals: str, *, timeout: float | None = None
    ) -> DelegationRecord:
        """Record a background delegation as running (durable when this returns)."""
        return await self.request(RecordDelegationStart(delegation_id, session_id, goals), timeout)

    async def record_delegation_finish(
        self, delegation_id: str, result: str, *, timeout: float | None = None
    ) -> DelegationRecord:
        """Record a delegation's result text (to be delivered); the first finish wins."""
        return await self.request(RecordDelegationFinish(delegation_id, result), timeout)

    async def record_delegation_delivered(
        self, delegation_id: str, *, timeout: float | None = None
    ) -> DelegationRecord:
        """Record that a turn took the delegation's result (idempotent)."""
        return await self.request(RecordDelegationDelivered(delegation_id), timeout)

    async def list_delegations(
        self,
        session_id: str,
        *,
        pending_only: bool = False,
        limit: int = 1000,
        timeout: float | None = None,
    ) -> list[DelegationRecord]:
        """A session's delegations, oldest first (only undelivered ones if ``pending_only``)."""
        return await self.request(ListDelegations(session_id, pending_only, limit), timeout)


async def spawn_store(
    spawner: ActorSystem | ActorContext,
    directory: str | os.PathLike[str],
    *,
    config: StoreConfig | None = None,
    name: str = "store",
    register: str | None = "store",
    timeout: float = DEFAULT_TIMEOUT,
) -> StoreClient:
    """Start a ``StoreActor`` under ``spawner`` and return a client for it (the two
    share a ``StoreLane``: see ``actor.py``).

    A database that cannot be opened raises its ``StoreUnavailable`` (naming
    the file and why), chained from the runtime's ``StartFailed``.
    """
    try:
        lane = StoreLane()
        actor = StoreActor(directory, config, lane)
        ref = await spawner.spawn(actor, name=name, register=register)
    except StartFailed as exc:
        error = exc.reason.error
        if isinstance(error, StoreError):
            raise error from exc
        raise StoreUnavailable("open", f"the store did not start: {exc.reason.describe()}") from exc
    return StoreClient(ref, timeout=timeout, lane=lane)
