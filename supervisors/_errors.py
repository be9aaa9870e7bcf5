"""Errors raised by supervisors and their administration API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from actors import ActorError, ExitReason

if TYPE_CHECKING:
    from actors import ActorRef


class SupervisorError(ActorError):
    """Base class of supervisor errors."""


class SpecError(SupervisorError, ValueError):
    """A child spec or supervisor flag is invalid; the message names the field and value."""


class ChildStartFailed(SupervisorError):
    """A child failed to start during the supervisor's own start."""

    def __init__(self, child_id: str, reason: ExitReason) -> None:
        super().__init__(f"child {child_id!r} failed to start: {reason.describe()}")
        self.child_id = child_id
        self.reason = reason


class AlreadyStarted(SupervisorError):
    """``start_child``: a child with this id is running."""

    def __init__(self, child_id: str, ref: ActorRef) -> None:
        super().__init__(f"child {child_id!r} is already started as {ref.path}")
        self.child_id = child_id
        self.ref = ref


class AlreadyPresent(SupervisorError):
    """``start_child``: a spec with this id exists but the child is not running."""

    def __init__(self, child_id: str) -> None:
        super().__init__(f"child {child_id!r} is already present (not running)")
        self.child_id = child_id


class ChildRunning(SupervisorError):
    """``restart_child`` / ``delete_child`` on a running child."""

    def __init__(self, child_id: str) -> None:
        super().__init__(f"child {child_id!r} is running")
        self.child_id = child_id


class ChildRestarting(SupervisorError):
    """``restart_child`` / ``delete_child`` on a child that is being restarted."""

    def __init__(self, child_id: str) -> None:
        super().__init__(f"child {child_id!r} is restarting")
        self.child_id = child_id


class ChildNotFound(SupervisorError):
    """No child spec with this id."""

    def __init__(self, child_id: Any) -> None:
        super().__init__(f"no child {child_id!r}")
        self.child_id = child_id


class TooManyChildren(SupervisorError):
    """A dynamic supervisor is at ``max_children`` and rejects (or its queue is full)."""

    def __init__(self, path: str, limit: int, queued: int | None = None) -> None:
        extra = f" and its admission queue is full ({queued})" if queued is not None else ""
        super().__init__(f"supervisor {path} is at max_children={limit}{extra}")
        self.limit = limit


class RestartIntensityExceeded(SupervisorError):
    """More than ``intensity`` restarts within ``period``: the supervisor gives up.

    Raised inside the supervisor, which then exits ``shutdown``; its text is the
    ``detail`` of the ``Escalated`` event.
    """

    def __init__(
        self, path: str, intensity: int, period: float, history: list[tuple[str, ExitReason]]
    ) -> None:
        recent = "; ".join(f"{cid}: {r.describe()}" for cid, r in history[-5:])
        super().__init__(
            f"supervisor {path} exceeded {intensity} restarts in {period:g}s "
            f"(recent failures: {recent})"
        )
        self.path = path
        self.intensity = intensity
        self.period = period
        self.history = history
