"""``StoreActor``: the only owner of the database, and its only writer.

Concurrency model: apsw's trio mode, not a thread of our own.
``apsw.Connection.as_async`` runs the connection's calls in a worker thread
that the connection owns, one at a time, while this actor waits as an ordinary
trio task. We chose it over ``trio.to_thread.run_sync`` on a plain connection
because its calls obey trio cancellation: a hard stop of the store (a kill,
its supervisor giving up, daemon shutdown) returns at once, and a progress
handler stops the statement inside SQLite, so the transaction rolls back as a
unit. With ``to_thread`` the actor would have to sit out the whole statement
(``abandon_on_cancel=False``, the only safe choice for a write), and a long
search could hold a kill past its grace and get the store reported
unkillable. Reads also stop when the caller's deadline passes, so the single
owner does not stay busy with a query nobody waits for. The price is one
thread per connection that apsw starts and ends: the store opens it in
``on_start`` and closes it in ``on_stop``, and a dropped connection is closed
before a new one is opened, so there is never more than one.

Requests are served one at a time from the mailbox (bounded, ``BLOCK``:
callers wait for space within their call timeout), so there are no
cross-thread locks and the worker never has more than one call queued.

**Group commit of small writes.** A write that ``runs_inline`` and finds
other requests waiting behind it is not run at once (alone, with nothing
queued, it is simply committed): it joins a pending group and the actor casts
itself one ``_Flush``,
which lands behind every request already queued. The writes that arrive
before it join the same group, and the flush runs the group in one
transaction, each request in its own savepoint (one failing is rolled back
alone), then answers each. When many sessions write at once (a mass cancel
settles a hundred transcripts and process rows) that is one commit instead of
a hundred. Any other request flushes
the pending group first, so requests are still served in arrival order.

**The lane: small writes without the mailbox.** A mailbox round trip (the
caller's wakeup, the actor's, the reply) costs about as much CPU as the
small write it carries, and a session makes four per turn. So whoever spawns
the store can hand a ``StoreLane`` to both the actor and its clients (as
Erlang hands out an ETS table: shared access under the owner's rules, the
owner keeping the table's life). It is the store's one direct-call lane, and
its rules are these. A client runs small writes (those that ``runs_inline``)
synchronously in a caller's own task, on the actor's inline connection, only
while the actor is idle with an empty mailbox and no pending group, so
requests stay in arrival order and never meet a worker-thread transaction. A
writer that finds no group open opens one and yields once (a trio checkpoint,
shielded from cancellation): every other writer that is ready meanwhile
joins it and waits (shielded too: the group runs at the opener's next step).
The opener, resuming, runs the group as one transaction (each write in its
own savepoint, as the actor's groups) and hands each writer its outcome; a
writer that was alone commits alone. Writers that are ready together are a
burst (fifty sessions streaming, a mass cancel settling a hundred
transcripts), and a burst is one commit without a mailbox round trip. If the
store got busy meanwhile, every writer of the group goes to the mailbox. What
the actor would do after a lane write (drop a broken connection, index) it
is told to do by a message to itself; a checkpoint goes to its checkpointer.
The actor attaches itself to the lane while its connection is open, so a
restarted store is attached again.

**Full-text index in batches.** A message write only queues its row for the
index (schema version 6); the actor sends itself ``IndexPending`` (run in the
worker thread) before every ``Search``, so a search sees every committed
message, and once ``INDEX_BATCH`` messages were written since the last batch,
so the queue stays short. (One transaction per batch: FTS5 writes a segment
per transaction, whose cost grows with the distinct words in it more than
with the messages, so smaller steps cost several times more in all.)

**Checkpoints elsewhere.** When writes grew the WAL past ``CHECKPOINT_PAGES``,
the actor casts ``Checkpoint`` to its child ``checkpointer``, which runs a
passive checkpoint on a connection of its own (``checkpointer.py``): the
store never waits for one. Past ``WAL_LIMIT_PAGES`` (a run of writes so steady
that no passive checkpoint got the WAL reused) the actor checkpoints itself with
its writes paused, after every write until the WAL has restarted.

Failures: every request is answered (an ``Unattended`` write, whose sender
does not wait, has its failure logged instead). A failure is sent back as a
``StoreError`` naming the operation (``reply.fail``) and the actor keeps
serving; it never dies of a bad request or a failed write. When the error
says the connection itself is in trouble (not a database, I/O error, file
deleted or replaced, read-only), the connection is closed and the next
request opens the file again, so a repaired or restored database is picked up
without a restart. A database that cannot be opened at start makes ``spawn``
fail with ``StartFailed`` carrying the ``StoreUnavailable``.
"""

from __future__ import annotations

import logging
import math
import os
from contextlib import suppress
from pathlib import Path
from typing import Any, Protocol

import attrs
import outcome
import trio

from actors import Actor, ActorRef, Call, ExitReason, MailboxConfig, MailboxFull, Overflow

from .checkpointer import Checkpoint, Checkpointer
from .database import CLOSE_TIMEOUT, WAL_LIMIT_PAGES, Database, runs_inline
from .errors import InvalidRequest, StoreError, StoreTimeout, StoreUnavailable
from .records import StoreConfig
from .requests import IndexPending, Request, Search, Unattended

log = logging.getLogger(__name__)


@attrs.frozen(slots=True)
class Sync(Call[None]):
    """Commit the writes waiting to be grouped, then checkpoint the WAL into the
    database (a restart checkpoint, bounded by ``CLOSE_TIMEOUT``). The daemon's
    shutdown asks for it before the tree stops; a call, served in order."""


class Answer(Protocol):
    """Where a request's result goes: the caller's deferred ``Reply``, or a log."""

    @property
    def caller_gave_up(self) -> bool: ...

    def send(self, value: Any) -> bool: ...

    def fail(self, error: BaseException) -> bool: ...


class LoggedFailure:
    """The answer to an ``Unattended`` write: nobody waits for it, so a failure is
    logged here (a warning naming the operation), never dropped unheard."""

    __slots__ = ("path", "request")

    def __init__(self, path: str, request: Request[Any]) -> None:
        self.path = path
        self.request = request

    @property
    def caller_gave_up(self) -> bool:
        return False  # a write is finished whoever waits; reads are never unattended

    def send(self, value: Any) -> bool:
        return True

    def fail(self, error: BaseException) -> bool:
        log.warning("store %s: unattended %s failed: %s", self.path, self.request.op, error)
        return True


class _Flush:
    """Run the pending group of small writes (cast by the store to itself)."""

    __slots__ = ()


_FLUSH = _Flush()


class _Index:
    """Index the queued messages (cast by the store to itself)."""

    __slots__ = ()


_INDEX = _Index()

INDEX_BATCH = 256
"""Messages written before the store indexes the queue in the background."""


class _Upkeep:
    """Drop a broken connection, or checkpoint with the writes paused (cast by the
    store to itself when a lane write or the WAL's size asks for it)."""

    __slots__ = ()


_UPKEEP = _Upkeep()


def _broken(db: Database) -> bool:
    """Whether ``db`` must be dropped (a function: mypy would keep an earlier check)."""
    return db.broken is not None


class _Gathering:
    """The small writes that meet in the lane during one scheduler pass."""

    __slots__ = ("done", "outcomes", "requests")

    def __init__(self, first: Request[Any]) -> None:
        self.requests: list[Request[Any]] = [first]
        self.outcomes: list[outcome.Outcome[Any]] | None = None
        """Set once the group ran; None while it waits, or if the store was busy by then."""
        self.done = trio.Event()


GATHER_LIMIT = 256
"""Most writes one lane group takes; the writers beyond it go to the mailbox."""


class StoreLane:
    """Small writes in the callers' own tasks while the store is idle, several ready
    writers in one commit: the store's one direct-call lane (its rules are in the
    module doc).

    Made by whoever spawns the store and given to the ``StoreActor`` and to its
    ``StoreClient``s; the actor attaches itself while its connection is open.
    """

    __slots__ = ("_gathering", "_owner")

    def __init__(self) -> None:
        self._owner: StoreActor | None = None
        self._gathering: _Gathering | None = None
        """The group a writer opened and runs when it resumes (after one yield)."""

    @property
    def attached(self) -> bool:
        return self._owner is not None

    async def run(self, request: Request[Any]) -> outcome.Outcome[Any] | None:
        """The outcome of ``request`` run now in this task or in the task of a writer
        ready beside it (one commit for them all), or None: send it to the mailbox
        instead (the store is busy)."""
        owner = self._owner
        if owner is None or not owner.may_run_now(request):
            return None
        gathering = self._gathering
        if gathering is not None:
            if len(gathering.requests) >= GATHER_LIMIT:
                return None
            index = len(gathering.requests)
            gathering.requests.append(request)
            # Bounded: the writer that opened the group runs it at its next step,
            # and a write that joined a group is finished like any that started.
            with trio.CancelScope(shield=True):
                await gathering.done.wait()
            return None if gathering.outcomes is None else gathering.outcomes[index]
        gathering = self._gathering = _Gathering(request)
        try:
            # Let every other ready task run first: the writers among them join.
            await trio.lowlevel.cancel_shielded_checkpoint()
        finally:
            self._gathering = None
        try:
            owner = self._owner
            if owner is not None:
                gathering.outcomes = owner.run_now(gathering.requests)
        finally:
            gathering.done.set()
        return None if gathering.outcomes is None else gathering.outcomes[0]


class StoreActor(Actor):
    """Owns ``<directory>/<config.filename>``; serves the requests in ``requests.py``."""

    mailbox = MailboxConfig(capacity=1000, overflow=Overflow.BLOCK)
    serve_queued_on_stop = True  # an unattended write sent before the stop is still made
    shutdown_budget = 5.0

    def __init__(
        self,
        directory: str | os.PathLike[str],
        config: StoreConfig | None = None,
        lane: StoreLane | None = None,
    ) -> None:
        self.config = config or StoreConfig()
        self.lane = lane
        self._serving = True
        """Inside ``receive`` (or not started, or stopping): the lane must not write."""
        self._upkeep_queued = False
        self.directory = Path(directory)
        self.path = self.directory / self.config.filename
        self._db: Database | None = None
        self._group: list[tuple[Request[Any], Answer]] = []
        """Small writes waiting for the ``_Flush`` already in the mailbox."""
        self._flush_queued = False
        self._unindexed = 0
        """Messages written since the last ``IndexPending`` (an estimate: failures count)."""
        self._index_queued = False
        self._checkpointer: ActorRef | None = None
        self._checkpoint_paused = False
        """The WAL outgrew ``WAL_LIMIT_PAGES``: the next ``_Upkeep`` checkpoints."""
        self.reopened = 0
        """How many times a dropped connection was opened again."""
        self.commits = 0
        """Transactions the small writes ran in (inline, by the lane or the actor): a
        group is one, however many writes it carries."""
        self.grouped = 0
        """Small writes that shared their transaction with others."""

    async def on_start(self) -> None:
        self._db = await self._open("open")
        self._checkpointer = await self.ctx.spawn(
            Checkpointer(self.path), name="checkpointer", shutdown=CLOSE_TIMEOUT
        )
        self._serving = False
        if self.lane is not None:
            self.lane._owner = self

    async def _open(self, op: str) -> Database:
        try:
            await trio.Path(self.directory).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(op, f"cannot create {self.directory}: {exc}") from exc
        return await Database.open(self.path, self.config, op)

    async def receive(self, message: Any) -> Any:
        self._serving = True
        try:
            return await self._receive(message)
        finally:
            self._serving = False

    def may_run_now(self, request: Request[Any]) -> bool:
        """Whether the lane may run ``request`` now (see "The lane" in the module doc)."""
        db = self._db
        return not (
            self._serving
            or db is None
            or db.broken is not None
            or self._group
            or self.ctx.mailbox_depth
            or not runs_inline(request)
        )

    def run_now(self, requests: list[Request[Any]]) -> list[outcome.Outcome[Any]] | None:
        """Run small writes in the caller's task, in one transaction (each request in
        its own savepoint when there are several), or None if that would break the
        store's rules (see "The lane" in the module doc)."""
        db = self._db
        if db is None or not all(self.may_run_now(request) for request in requests):
            return None
        self._serving = True
        try:
            for request in requests:
                self._count_written(request)
            if len(requests) > 1:
                return [
                    outcome.Value(value) if ok else outcome.Error(value)
                    for ok, value in self._run_group(db, requests)
                ]
            self.commits += 1
            try:
                return [outcome.Value(db.run_inline(requests[0]))]
            except StoreError as exc:
                return [outcome.Error(exc)]
            except Exception as exc:
                return [outcome.Error(self._unexpected(requests[0], exc))]
        finally:
            self._serving = False
            self._checkpoint_if_due(db)
            if _broken(db) and not self._upkeep_queued:
                with suppress(MailboxFull):  # full: the next request does it anyway
                    self._upkeep_queued = self.ctx.self.cast_nowait(_UPKEEP)

    def _run_group(self, db: Database, requests: list[Request[Any]]) -> list[tuple[bool, Any]]:
        """Several small writes in one transaction on the inline connection (counted)."""
        self.commits += 1
        self.grouped += len(requests)
        return db.run_inline_group(requests)

    async def _receive(self, message: Any) -> Any:
        if message is _UPKEEP:
            self._upkeep_queued = False
            await self._upkeep()
            return None
        if message is _FLUSH:
            self._flush_queued = False
            await self._flush()
            return None
        if message is _INDEX:
            self._index_queued = False
            await self._flush()
            await self._index()
            return None
        if isinstance(message, Sync):
            await self._flush()
            if self._db is not None:
                await self._db.checkpoint()
            return None
        reply: Answer
        if isinstance(message, Unattended):
            if not isinstance(message.request, Request) or not message.request.writes:
                log.warning(
                    "store %s: dropped unattended %s: only writes may be sent unattended",
                    self.ctx.path,
                    type(message.request).__name__,
                )
                return None
            message, reply = message.request, LoggedFailure(self.ctx.path, message.request)
        else:
            try:
                reply = self.ctx.defer_reply()
            except RuntimeError:
                # A cast: there is nobody to tell whether it worked, so do not do it.
                log.warning(
                    "store %s: dropped %s sent with cast; store requests must be calls"
                    " (or Unattended writes)",
                    self.ctx.path,
                    type(message).__name__,
                )
                return None
        if not isinstance(message, Request):
            reply.fail(
                InvalidRequest("request", f"{type(message).__name__} is not a store request")
            )
            return None
        self.ctx.beat(message.op)
        self._count_written(message)
        if self._db is not None and runs_inline(message):
            if not self._group and self.ctx.mailbox_depth == 0:
                await self._answer(message, reply)  # nothing to group with: commit it alone
                return None
            self._group.append((message, reply))
            if not self._flush_queued:
                try:
                    self._flush_queued = self.ctx.self.cast_nowait(_FLUSH)
                except MailboxFull:
                    await self._flush()  # no room for the marker: run the group now
            return None
        await self._flush()  # earlier writes first: requests are served in order
        if isinstance(message, Search):
            await self._index()
        await self._answer(message, reply)
        return None

    def _count_written(self, request: Request[Any]) -> None:
        self._unindexed += request.messages_written()
        if self._unindexed >= INDEX_BATCH and not self._index_queued:
            with suppress(MailboxFull):  # full: the next write tries again
                self._index_queued = self.ctx.self.cast_nowait(_INDEX)

    async def _index(self) -> None:
        """Index the queued messages; a failure is logged (the next search retries)."""
        self._unindexed = 0
        db = self._db
        if db is None:
            return
        try:
            await db.run(IndexPending())
        except StoreError as exc:
            log.warning("store %s: indexing queued messages failed: %s", self.ctx.path, exc)
        finally:
            self._checkpoint_if_due(db)
            if db.broken is not None:
                await self._drop(db)

    async def _flush(self) -> None:
        """Run the pending small writes as one transaction and answer each."""
        group, self._group = self._group, []
        if not group:
            return
        db = self._db
        if db is None:  # dropped since they were queued: the serial path reopens
            for request, reply in group:
                await self._answer(request, reply)
            return
        outcomes = self._run_group(db, [request for request, _ in group])
        for (_, reply), (ok, value) in zip(group, outcomes, strict=True):
            if ok:
                reply.send(value)
            else:
                reply.fail(value)
        self._checkpoint_if_due(db)
        if db.broken is not None:
            await self._drop(db)

    def _checkpoint_if_due(self, db: Database) -> None:
        """Have the WAL checkpointed if the writes grew it enough: by the checkpointer,
        or past ``WAL_LIMIT_PAGES`` by the actor itself (``_Upkeep``), writes paused."""
        due = db.take_checkpoint()
        # Past the limit every write asks, not only every CHECKPOINT_PAGES: a paused
        # checkpoint that could not finish (it waited out its busy timeout behind the
        # checkpointer's on a slow disk) is tried again at the next write, until the
        # WAL has restarted, instead of letting it grow another CHECKPOINT_PAGES.
        if db.wal_pages >= WAL_LIMIT_PAGES or (due and self._checkpointer is None):
            self._checkpoint_paused = True
            if not self._upkeep_queued:
                with suppress(MailboxFull):  # full: the next write asks again
                    self._upkeep_queued = self.ctx.self.cast_nowait(_UPKEEP)
            return
        if not due or self._checkpointer is None:
            return
        with suppress(MailboxFull):  # one is queued already: it covers these pages too
            self._checkpointer.cast_nowait(Checkpoint())

    async def _answer(self, request: Request[Any], reply: Answer) -> None:
        try:
            result = await self._serve(request, reply)
        except StoreError as exc:
            reply.fail(exc)
        except Exception as exc:
            reply.fail(self._unexpected(request, exc))
        else:
            reply.send(result)

    def _unexpected(self, request: Request[Any], exc: Exception) -> StoreError:
        """A bug, not a database error: logged with its traceback, reported as a StoreError."""
        log.exception("store %s: unexpected failure in %s", self.ctx.path, request.op)
        error = StoreError(request.op, f"unexpected {type(exc).__name__}: {exc}")
        error.__cause__ = exc
        return error

    async def _upkeep(self) -> None:
        """What a write left to do: drop a broken connection, or checkpoint with the
        writes paused (``_checkpoint_if_due``)."""
        db = self._db
        paused, self._checkpoint_paused = self._checkpoint_paused, False
        if db is None:
            return
        if _broken(db):
            await self._drop(db)
        elif paused:
            await db.checkpoint()

    async def _serve(self, request: Request[Any], reply: Answer) -> Any:
        if not request.writes and reply.caller_gave_up:
            raise StoreTimeout(request.op, "the caller gave up before the read started")
        db = self._db
        if db is None:
            db = self._db = await self._open(request.op)
            self.reopened += 1
        try:
            if request.writes:
                # Not bounded by the caller's deadline: a write that started is
                # finished and committed even if the caller stopped waiting.
                self.commits += 1
                try:
                    return await db.run(request)
                finally:
                    self._checkpoint_if_due(db)
            with trio.move_on_at(getattr(request, "deadline", math.inf)) as scope:
                return await db.run(request)
            assert scope.cancelled_caught
            raise StoreTimeout(request.op, "the caller's deadline passed while the query ran")
        finally:
            if db.broken is not None:
                await self._drop(db)

    async def _drop(self, db: Database) -> None:
        """Close a connection that must not be used again; the next request reopens."""
        log.warning(
            "store %s: dropping the connection to %s: %s", self.ctx.path, db.path, db.broken
        )
        if self._db is db:
            self._db = None
        with trio.move_on_after(CLOSE_TIMEOUT, shield=True):
            try:
                await db.close()
            except Exception as exc:
                log.warning("store %s: closing %s failed: %s", self.ctx.path, db.path, exc)

    async def on_stop(self, reason: ExitReason) -> None:
        self._serving = True
        if self.lane is not None and self.lane._owner is self:
            self.lane._owner = None
        await self._flush()  # writes already accepted are committed and answered
        db, self._db = self._db, None
        if db is not None:
            try:
                await db.close()
            except Exception as exc:
                log.warning("store %s: closing %s failed: %s", self.ctx.path, db.path, exc)
