"""Errors raised to callers of the actor runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._exits import ExitReason


class ActorError(Exception):
    """Base class of every error the runtime raises to a caller."""


class ActorExited(ActorError):
    """The target actor is dead, or died before it replied.

    ``handled`` tells whether the message reached the actor's handler: False
    means it was still queued (or the actor was already dead), so sending it to
    a restarted incarnation cannot process it twice.
    """

    def __init__(self, path: str, reason: ExitReason, *, handled: bool = False) -> None:
        super().__init__(f"actor {path} exited: {reason.describe()}")
        self.path = path
        self.reason = reason
        self.handled = handled


class CallTimeout(ActorError, TimeoutError):
    """A ``call`` got no reply within its timeout; a late reply is discarded."""

    def __init__(self, path: str, timeout: float, message: object) -> None:
        super().__init__(
            f"call to {path} timed out after {timeout:g}s (message {type(message).__name__})"
        )
        self.path = path
        self.timeout = timeout


class CallToSelf(ActorError):
    """An actor called itself, which would deadlock."""

    def __init__(self, path: str) -> None:
        super().__init__(f"actor {path} tried to call itself; use cast or handle it inline")
        self.path = path


class MailboxFull(ActorError):
    """The mailbox is full and its policy (``fail``, or a non-blocking send) refuses the message."""

    def __init__(self, path: str, capacity: int) -> None:
        super().__init__(f"mailbox of {path} is full (capacity {capacity})")
        self.path = path
        self.capacity = capacity


class StartFailed(ActorError):
    """An actor's start hook raised, timed out or was cancelled."""

    def __init__(self, path: str, reason: ExitReason) -> None:
        super().__init__(f"actor {path} failed to start: {reason.describe()}")
        self.path = path
        self.reason = reason


class NameTaken(ActorError):
    """A registered name, or a child name under one parent, is already in use."""

    def __init__(self, name: str, holder: str) -> None:
        super().__init__(f"name {name!r} is already taken by {holder}")
        self.name = name
        self.holder = holder


class NotRunning(ActorError):
    """The operation needs a running actor or system (spawn on a stopping parent, say)."""


class TaskFailed(ActorError):
    """The task crashed: ``error`` is what its body raised (None when a linked actor's
    crash took it down: ``reason.cause`` says which)."""

    def __init__(self, path: str, reason: ExitReason, error: BaseException | None) -> None:
        super().__init__(f"task {path} crashed: {reason.describe()}")
        self.path = path
        self.reason = reason
        self.error = error


class TaskCancelled(ActorError):
    """The task was stopped, killed or cancelled before its body returned a value."""

    def __init__(self, path: str, reason: ExitReason) -> None:
        super().__init__(f"task {path} ended without a result: {reason.describe()}")
        self.path = path
        self.reason = reason


class UnhandledMessage(ActorError, TypeError):
    """An actor received a message its ``receive`` does not handle."""

    def __init__(self, path: str, message: object) -> None:
        super().__init__(f"actor {path} has no handler for {type(message).__name__}: {message!r}")
        self.path = path
        self.message = message
