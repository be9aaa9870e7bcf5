"""Errors of the store: every one names the operation that failed and why.

``StoreError`` is the one type a caller needs to catch: the client turns the
runtime's own failures (call timeout, dead store actor, full mailbox) into
subclasses of it too, with the original chained as ``__cause__``.
"""

from __future__ import annotations

import apsw


class StoreError(Exception):
    """A store request failed; ``operation`` and ``detail`` say which and why.

    The message reads ``store append (session 's-1') failed: <detail>``.
    """

    def __init__(self, operation: str, detail: str, *, session_id: str | None = None) -> None:
        where = operation if session_id is None else f"{operation} (session {session_id!r})"
        super().__init__(f"store {where} failed: {detail}")
        self.operation = operation
        self.detail = detail
        self.session_id = session_id


class SessionNotFound(StoreError):
    """No session has that id (or the parent named by ``parent_id`` does not exist)."""


class SessionExists(StoreError):
    """``create_session`` with an id that is already taken."""


class SessionEnded(StoreError):
    """A write to a session that was ended; ``reopen_session`` first."""


class InvalidTranscript(StoreError):
    """The messages would break the transcript's rules (roles, tool pairing)."""


class SeqConflict(StoreError):
    """``expected_seq`` does not match where the session's transcript ends."""

    def __init__(
        self, operation: str, detail: str, *, session_id: str, expected: int, actual: int
    ) -> None:
        super().__init__(operation, detail, session_id=session_id)
        self.expected = expected
        self.actual = actual


class StaleWriter(StoreError):
    """A transcript write carrying a writer epoch that is no longer the session's
    (``ClaimWriter``): its writer was left behind and must not write any more."""

    def __init__(self, operation: str, detail: str, *, session_id: str, writer: int) -> None:
        super().__init__(operation, detail, session_id=session_id)
        self.writer = writer


class InvalidRequest(StoreError):
    """A request with a bad argument (empty id, negative limit, empty search query...)."""


class CorruptRecord(StoreError):
    """A stored row cannot be read back (malformed content blob, unknown role)."""


class RequestAborted(StoreError):
    """The store stopped waiting for a request (it was cancelled): rolled back."""


class StoreUnavailable(StoreError):
    """The database cannot be used right now: it cannot be opened, was deleted or
    replaced, is not a database, or the store actor is not running.

    After such a failure the store actor drops its connection and opens the file
    afresh on the next request.
    """


class StoreTimeout(StoreUnavailable):
    """The store did not answer within the call's timeout.

    For a write the outcome is unknown: it may still be committed. Retrying an
    ``append`` with the same ``expected_seq`` is safe (an identical append that
    already landed is acknowledged, not repeated).
    """


# -- apsw errors -----------------------------------------------------------------------

_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    apsw.NotADBError,
    apsw.CorruptError,
    apsw.IOError,
    apsw.CantOpenError,
    apsw.ReadOnlyError,
    apsw.ConnectionClosedError,
    apsw.PermissionsError,
    apsw.AuthError,
    apsw.ProtocolError,
    apsw.NoLFSError,
)
"""Errors after which the connection is not trusted: it is closed and reopened."""


def is_connection_error(exc: BaseException) -> bool:
    """True if ``exc`` means the connection (not just the request) is in trouble."""
    return isinstance(exc, _CONNECTION_ERRORS)


def describe_sqlite_error(exc: BaseException) -> str:
    """``exc`` as a sentence with SQLite's own words and the error class."""
    text = str(exc) or "no detail"
    hint = ""
    if isinstance(exc, apsw.FullError):
        hint = " (no space left for the database; free disk space or raise the size limit)"
    elif isinstance(exc, apsw.ReadOnlyError):
        hint = " (the database file or its directory is read-only)"
    elif isinstance(exc, apsw.NotADBError):
        hint = " (the file exists but is not an SQLite database)"
    elif isinstance(exc, apsw.BusyError):
        hint = " (another process holds the write lock)"
    return f"{text}{hint} [{type(exc).__name__}]"
