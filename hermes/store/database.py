"""The store's one SQLite connection, in apsw's trio mode.

``apsw.Connection.as_async`` gives a connection whose calls run in a worker
thread owned by that connection, one at a time, while the calling trio task
waits on an event. A call obeys trio cancellation: the waiting task returns at
once and a progress handler stops the statement inside SQLite within a few
thousand steps; our ``Abort`` flag stops the Python work between statements.
Every request runs as one function call in that thread
(``queries.run_request``: a whole transaction), so a cancelled request is
rolled back as a unit and never leaves half a write behind.

**Small writes run inline.** Handing a request to the worker thread and
back costs about 230 us of CPU, twice what a one-message append costs SQLite.
So writes of at most ``INLINE_MAX_MESSAGES`` messages and
``INLINE_MAX_CHARS`` characters (every write a session makes in a turn) run
on a second, ordinary connection in the actor's own task: they block the
event loop for the ~130 us they take and are never cancelled half-way (a
write that started is finished anyway). Reads and large writes still go to
the worker, where cancellation and deadlines reach into SQLite. The inline
connection's commits never checkpoint the WAL themselves (which would fsync
on the loop), and neither do the worker's: when the WAL grows past
``CHECKPOINT_PAGES`` the owner is told (``take_checkpoint``) and has a passive
checkpoint run on a connection of its own (``checkpointer.py``).

A database file that is deleted or replaced while open stays readable and
writable through our descriptor: SQLite would go on writing into a file nobody
can see. Before each request the worker checks that the path still names the
file it opened; if not, the request fails and the connection is dropped. The
``-wal`` and ``-shm`` files we leave behind at the path belong to the vanished
file, and SQLite would replay that WAL over whatever file is put there next,
so after closing we remove them (only if they are still the very files we had
open). The next request then opens the path afresh.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import apsw
import apsw.aio
import attrs
import trio

from hermes.model.types import (
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

from .errors import (
    StoreError,
    StoreTimeout,
    StoreUnavailable,
    describe_sqlite_error,
    is_connection_error,
)
from .operations import Abort
from .queries import run_request, run_requests_grouped
from .records import StoreConfig
from .requests import AppendMessages, Compact, IndexPending, ReplaceLast, Request
from .schema import configure, migrate
from .tails import TailCache

log = logging.getLogger(__name__)

CLOSE_TIMEOUT = 5.0
"""Seconds a close may take (it waits for a statement still stopping in the worker)."""

PROGRESS_STEPS = 5000
"""SQLite steps between two checks for cancellation inside a running statement."""

SIDECARS = ("-wal", "-shm")

INLINE_MAX_MESSAGES = 8
INLINE_MAX_CHARS = 64 * 1024
CHECKPOINT_PAGES = 256
"""WAL pages (1 MB) after which a passive checkpoint is run. Often and short: the
WAL is reused from its start only when a checkpoint copied every frame and no
write came meanwhile, and under a steady stream of writes short checkpoints get
there far more often than long ones."""

WAL_LIMIT_PAGES = 8192
"""WAL pages (32 MB) after which the owner checkpoints with its writes paused, for
the rare run of writes so steady that no passive checkpoint got the WAL reused.
(Each pause blocks writes for 8-20 ms on a busy daemon: a cancel's last write too.)"""

FileIdentity = tuple[int, int]


def file_identity(path: str) -> FileIdentity | None:
    """(device, inode) of the file at ``path``, or None if there is none."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


@attrs.frozen(slots=True)
class _Files:
    """Which files the connection has open: the database and its WAL sidecars."""

    db: FileIdentity | None
    sidecars: tuple[tuple[str, FileIdentity | None], ...]


def _setup(conn: apsw.Connection, path: str, config: StoreConfig) -> _Files:
    """In the worker: settings, schema, and the identities of the files we opened."""
    configure(conn, config)
    migrate(conn)  # its transaction creates the -wal and -shm files
    sidecars = tuple((path + s, file_identity(path + s)) for s in SIDECARS)
    return _Files(file_identity(path), sidecars)


def _run_checked(
    conn: apsw.Connection,
    path: str,
    files: _Files,
    request: Request[Any],
    abort: Abort,
    tails: TailCache | None = None,
) -> Any:
    """In the worker: refuse to use a file that is no longer the one at ``path``."""
    session_id = getattr(request, "session_id", None)
    current = file_identity(path)
    if current != files.db:
        what = "deleted" if current is None else "replaced"
        detail = f"the database file {path} was {what} after it was opened"
        raise _Moved(request.op, detail, session_id=session_id)
    return run_request(conn, request, abort, tails)


def _block_chars(block: ContentBlock) -> int:
    if isinstance(block, TextBlock):
        return len(block.text)
    if isinstance(block, ToolResultBlock):
        content = block.content
        if isinstance(content, str):
            return len(content)
        return sum(_block_chars(b) for b in content)
    if isinstance(block, ToolUseBlock):
        return len(repr(block.input))
    if isinstance(block, ThinkingBlock):
        return len(block.thinking) + len(block.signature)
    if isinstance(block, RedactedThinkingBlock):
        return len(block.data)
    assert isinstance(block, ImageBlock)
    return len(block.data)


def _messages_of(request: Request[Any]) -> tuple[object, ...] | None:
    """The messages a write carries, unchecked (the worker's checks name a bad one)."""
    if isinstance(request, AppendMessages):
        return request.messages
    if isinstance(request, ReplaceLast):
        return (request.message,)
    if isinstance(request, Compact):
        return request.messages  # a whole transcript: usually to the worker thread
    return None


def runs_inline(request: Request[Any]) -> bool:
    """Whether ``request`` is a write small enough to run on the loop (see the module doc)."""
    if not request.writes or isinstance(request, IndexPending):
        return False  # reads, and a batch of index work, run in the worker thread
    messages = _messages_of(request)
    if messages is None:
        return True  # sessions rows, usage, titles, truncation: small statements
    if len(messages) > INLINE_MAX_MESSAGES:
        return False
    chars = 0
    for message in messages:
        if not isinstance(message, Message):
            return False
        for block in message.content:
            chars += _block_chars(block)
            if chars > INLINE_MAX_CHARS:
                return False
    return True


class WalWatch:
    """The WAL's size after the last commit; ``due`` each time it grew by another
    ``CHECKPOINT_PAGES`` (counted from its last restart).

    Installed as the WAL hook of both connections, which replaces SQLite's own
    auto-checkpoint on them: a commit then never checkpoints (and fsyncs) itself.
    Not on every commit past the mark: while writes go on beside a checkpoint the
    WAL is not restarted, and asking again at each commit would checkpoint (and
    fsync) over and over.
    """

    __slots__ = ("_next", "due", "pages")

    def __init__(self) -> None:
        self.due = False
        self.pages = 0
        self._next = CHECKPOINT_PAGES

    def hook(self, _conn: apsw.Connection, _name: str, pages: int) -> int:
        if pages < self.pages:  # restarted from the beginning
            self._next = CHECKPOINT_PAGES
        self.pages = pages
        if pages >= self._next:
            self.due = True
            self._next = pages + CHECKPOINT_PAGES
        return apsw.SQLITE_OK


def _watch_wal(conn: apsw.Connection, watch: WalWatch) -> None:
    conn.set_wal_hook(watch.hook)


def checkpoint_passive(conn: apsw.Connection) -> tuple[int, int]:
    """In a worker: a passive WAL checkpoint (it never waits for readers or writers).

    Returns SQLite's (frames in the WAL, frames copied back). A connection that has
    not read the database yet has not opened its WAL, and SQLite checkpoints nothing
    through it (returning -1s): so the schema is read first, which costs microseconds.
    SQLite runs one checkpoint at a time and refuses a second with ``BusyError``;
    the one running copies these frames too, so that is ``(-1, -1)``, not a failure
    (the checkpointer's and the store's paused one do meet).
    """
    try:
        conn.execute("SELECT 1 FROM sqlite_schema LIMIT 1").fetchall()
        frames, copied = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
    except apsw.BusyError:
        return -1, -1
    return frames, copied


RESTART_WAIT = 4.0
"""Seconds ``checkpoint_restart`` keeps trying while another checkpoint holds
SQLite's checkpoint lock (under ``CLOSE_TIMEOUT``, the owner's bound on it)."""


def checkpoint_restart(conn: apsw.Connection, wait: float = RESTART_WAIT) -> tuple[int, int]:
    """In a worker: a checkpoint that copies the whole WAL and has the next write restart it.

    For the store's own checkpoint with its writes paused, so it waits rather than
    skip: two passive checkpoints that kept meeting could leave the WAL growing
    through a burst of writes. Readers are waited for by the connection's busy
    timeout; a checkpoint already running (the checkpointer's) holds a lock SQLite
    refuses at once, without the busy handler, so that is tried again every few
    milliseconds for up to ``wait`` seconds. ``(-1, -1)`` when the wait ran out.
    """
    give_up = time.monotonic() + wait
    conn.execute("SELECT 1 FROM sqlite_schema LIMIT 1").fetchall()
    while True:
        try:
            frames, copied = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_RESTART)
        except apsw.BusyError:
            if time.monotonic() >= give_up:
                return -1, -1
            time.sleep(0.002)
        else:
            return frames, copied


async def open_async(path: Path) -> apsw.AsyncConnection:
    """An apsw connection in trio mode (calls run in its own worker thread)."""
    # Name the controller rather than let apsw guess the framework, and look for
    # cancellation more often than its default (50,000 steps).
    token = apsw.async_controller.set(apsw.aio.Trio)  # type: ignore[arg-type]
    steps = apsw.aio.check_progress_steps.set(PROGRESS_STEPS)
    try:
        return await apsw.Connection.as_async(str(path))
    finally:
        apsw.aio.check_progress_steps.reset(steps)
        apsw.async_controller.reset(token)


class _Moved(StoreUnavailable):
    """The database file at the path is not the one we have open any more."""


def _remove_stale_sidecars(files: _Files) -> list[str]:
    """Remove the -wal/-shm we had open from the path, if they are still ours."""
    removed = []
    for path, identity in files.sidecars:
        if identity is not None and file_identity(path) == identity:
            try:
                os.unlink(path)
            except FileNotFoundError:
                continue
            removed.append(path)
    return removed


class Database:
    """One open connection: run requests in it, close it. Not shared, not reentrant.

    ``broken`` is set (to the reason) once the connection must not be used again;
    its owner then closes it and opens the file afresh.
    """

    def __init__(
        self,
        path: Path,
        aconn: apsw.AsyncConnection,
        files: _Files,
        writer: apsw.Connection,
        wal: WalWatch,
    ) -> None:
        self.path = path
        self._aconn = aconn
        self._writer = writer
        self._files = files
        self._moved = False
        self._wal = wal
        self._tails = TailCache()
        """The inline connection's appends (only it uses them: one thread, the loop's)."""
        self.broken: str | None = None

    @property
    def connection(self) -> apsw.AsyncConnection:
        """The worker-thread connection: reads and large writes."""
        return self._aconn

    @property
    def writer(self) -> apsw.Connection:
        """The inline connection: small writes."""
        return self._writer

    @classmethod
    async def open(cls, path: Path, config: StoreConfig, op: str = "open") -> Database:
        """Open (creating if needed) and migrate; ``StoreUnavailable`` naming ``op`` if not."""
        try:
            aconn = await open_async(path)
        except apsw.Error as exc:
            detail = f"cannot open {path}: {describe_sqlite_error(exc)}"
            raise StoreUnavailable(op, detail) from exc
        wal = WalWatch()
        try:
            files = await aconn.async_run(_setup, cast(apsw.Connection, aconn), str(path), config)
            await aconn.async_run(_watch_wal, cast(apsw.Connection, aconn), wal)
        except BaseException as exc:
            with trio.move_on_after(CLOSE_TIMEOUT, shield=True):
                await close_async(aconn, path)
            if isinstance(exc, StoreError):
                raise StoreUnavailable(op, f"cannot use {path}: {exc.detail}") from exc
            if isinstance(exc, apsw.Error):
                detail = f"cannot use {path}: {describe_sqlite_error(exc)}"
                raise StoreUnavailable(op, detail) from exc
            if isinstance(exc, OSError):
                raise StoreUnavailable(op, f"cannot use {path}: {exc}") from exc
            raise
        try:
            writer = apsw.Connection(str(path))
            configure(writer, config)
            _watch_wal(writer, wal)
            if file_identity(str(path)) != files.db:
                raise StoreUnavailable(op, f"{path} was replaced while it was being opened")
        except BaseException as exc:
            with trio.move_on_after(CLOSE_TIMEOUT, shield=True):
                await close_async(aconn, path)
            if isinstance(exc, apsw.Error):
                detail = f"cannot use {path}: {describe_sqlite_error(exc)}"
                raise StoreUnavailable(op, detail) from exc
            raise
        return cls(path, aconn, files, writer, wal)

    async def run(self, request: Request[Any]) -> Any:
        """Run one request in its own transaction (committed when this returns)."""
        if runs_inline(request):
            return self.run_inline(request)
        self._check_usable(request)
        if request.writes and request.moves_tails:
            # The worker's write may change what the inline appends knew.
            self._tails.forget(getattr(request, "session_id", None))
        abort = Abort()
        with self._errors(request):
            try:
                return await self._aconn.async_run(
                    _run_checked,
                    cast(apsw.Connection, self._aconn),
                    str(self.path),
                    self._files,
                    request,
                    abort,
                )
            except trio.Cancelled:
                abort.set()  # stop the Python side too, between statements
                raise

    def run_inline(self, request: Request[Any]) -> Any:
        """Run a small write (one that ``runs_inline``) now, on the loop, committed when
        this returns."""
        self._check_usable(request)
        with self._errors(request):
            return _run_checked(
                self._writer, str(self.path), self._files, request, Abort(), self._tails
            )

    def take_checkpoint(self) -> bool:
        """Whether writes grew the WAL past ``CHECKPOINT_PAGES`` since the last time
        this said so: the owner should then have it checkpointed."""
        due, self._wal.due = self._wal.due, False
        return due

    @property
    def wal_pages(self) -> int:
        """Pages in the WAL after the last commit (0 before any)."""
        return self._wal.pages

    async def checkpoint(self) -> None:
        """A restart checkpoint in the worker thread, now (the owner's writes wait):
        it waits out a checkpoint already running rather than skip (``checkpoint_restart``).

        A failure is logged, not raised: the WAL only grows until the next one.
        """
        with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_TIMEOUT):
            try:
                await self._aconn.async_run(checkpoint_restart, cast(apsw.Connection, self._aconn))
            except apsw.Error as exc:  # (a wait that ran out is no error: -1s)
                log.warning("checkpoint of %s failed: %s", self.path, describe_sqlite_error(exc))

    def _check_usable(self, request: Request[Any]) -> None:
        if self.broken is not None:
            raise _unavailable(request, self.broken)

    @contextmanager
    def _errors(self, request: Request[Any]) -> Iterator[None]:
        """Report a failure as a ``StoreError``; mark the connection broken if it is."""
        op, session_id = request.op, getattr(request, "session_id", None)
        try:
            yield
        except _Moved as exc:
            self._moved = True
            self.broken = exc.detail
            raise StoreUnavailable(op, exc.detail, session_id=session_id) from None
        except apsw.Error as exc:
            detail = describe_sqlite_error(exc)
            if is_connection_error(exc):
                self.broken = detail
                raise StoreUnavailable(op, detail, session_id=session_id) from exc
            raise StoreError(op, detail, session_id=session_id) from exc
        except trio.TooSlowError as exc:
            detail = "the caller's deadline passed while the query ran"
            raise StoreTimeout(op, detail, session_id=session_id) from exc

    def run_inline_group(self, requests: list[Request[Any]]) -> list[tuple[bool, Any]]:
        """Run small writes (each ``runs_inline``) in one transaction on the inline
        connection: one commit for the group, each request in its own savepoint.

        Returns ``(True, result)`` or ``(False, StoreError)`` per request. When the
        connection itself fails (or the file moved), every request fails with it.
        """
        if self.broken is not None:
            return [(False, _unavailable(r, self.broken)) for r in requests]
        path = str(self.path)
        try:
            current = file_identity(path)
            if current != self._files.db:
                what = "deleted" if current is None else "replaced"
                raise _Moved("write", f"the database file {path} was {what} after it was opened")
            outcomes = run_requests_grouped(self._writer, requests, _is_fatal, self._tails)
        except _Moved as exc:
            self._moved = True
            self.broken = exc.detail
            return [(False, _unavailable(r, exc.detail)) for r in requests]
        except apsw.Error as exc:
            detail = describe_sqlite_error(exc)
            if is_connection_error(exc):
                self.broken = detail
                return [(False, _unavailable(r, detail)) for r in requests]
            return [(False, _as_store_error(r, exc)) for r in requests]
        out: list[tuple[bool, Any]] = []
        for request, (ok, value) in zip(requests, outcomes, strict=True):
            if not ok:
                value = _as_store_error(request, value)
            out.append((ok, value))
        return out

    async def close(self) -> None:
        """Close the connection (its worker thread ends with it).

        If the file was deleted or replaced, also remove the WAL and shared-memory
        files we had open, so they are not replayed over the next file at the path.
        """
        try:
            self._writer.close()
        except apsw.Error as exc:
            log.warning("closing %s: %s; forcing it", self.path, describe_sqlite_error(exc))
            self._writer.close(force=True)
        await close_async(self._aconn, self.path)
        if self._moved:
            removed = await trio.to_thread.run_sync(_remove_stale_sidecars, self._files)
            if removed:
                log.warning("removed the stale %s of a vanished database", ", ".join(removed))


def _is_fatal(error: BaseException) -> bool:
    """An error that ends a whole group of inline writes: the connection is in trouble."""
    return isinstance(error, apsw.Error) and is_connection_error(error)


def _unavailable(request: Request[Any], detail: str) -> StoreUnavailable:
    return StoreUnavailable(request.op, detail, session_id=getattr(request, "session_id", None))


def _as_store_error(request: Request[Any], error: BaseException) -> StoreError:
    """One failed request of a group, as ``Database.run`` would have reported it."""
    session_id = getattr(request, "session_id", None)
    if isinstance(error, StoreError):
        return error
    if isinstance(error, apsw.Error):
        return StoreError(request.op, describe_sqlite_error(error), session_id=session_id)
    detail = f"unexpected {type(error).__name__}: {error}"
    store_error = StoreError(request.op, detail, session_id=session_id)
    store_error.__cause__ = error
    return store_error


async def close_async(aconn: apsw.AsyncConnection, path: Path) -> None:
    """Close a trio-mode connection, forcing it if a plain close fails."""
    try:
        await aconn.aclose()
    except apsw.Error as exc:
        log.warning("closing %s: %s; forcing it", path, describe_sqlite_error(exc))
        await aconn.aclose(force=True)
