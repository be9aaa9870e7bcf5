"""Errors the daemon answers with; each has a stable ``code`` for the wire."""

from __future__ import annotations


class RequestError(Exception):
    """A request that cannot be served; ``code`` is what clients switch on."""

    code = "bad_request"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class UnknownSession(RequestError):
    code = "unknown_session"


class SessionIsClosed(RequestError):
    code = "session_closed"


class NotFound(RequestError):
    code = "not_found"


class ShuttingDown(RequestError):
    """The daemon is stopping: it takes no new connections, requests or sessions."""

    code = "shutting_down"
