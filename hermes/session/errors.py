"""Errors a session returns to its callers (raised in the caller, never in the session)."""

from __future__ import annotations


class SessionError(Exception):
    """Base class of the session's refusals."""


class SessionBusy(SessionError):
    """A prompt arrived mid-turn and the busy mode is ``reject``."""


class QueueFull(SessionError):
    """Too many prompts (or steers) are already waiting."""


class SessionClosed(SessionError):
    """The session was closed; it takes no more input."""


class NoTurnRunning(SessionError):
    """A verb that needs a running turn (redirect, interrupt) found the session idle."""


class UnknownApproval(SessionError):
    """No approval request with that id is waiting."""


class InvalidInput(SessionError, ValueError):
    """The input itself is wrong (empty text, unknown busy mode...)."""
