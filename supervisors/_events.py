"""Supervisor events, published on the actor system's event bus and logged."""

from __future__ import annotations

import logging
from typing import Any

import attrs

from actors import ActorContext, ExitReason

log = logging.getLogger("supervisors")


@attrs.frozen(slots=True)
class ChildStarted:
    supervisor: str
    child_id: str
    path: str
    restarts: int


@attrs.frozen(slots=True)
class ChildExited:
    supervisor: str
    child_id: str
    path: str
    reason: ExitReason


@attrs.frozen(slots=True)
class ChildRestarting:
    """A restart was decided; ``delay`` is the backoff before it (0 if none)."""

    supervisor: str
    child_id: str
    attempt: int
    delay: float


@attrs.frozen(slots=True)
class RestartFailed:
    supervisor: str
    child_id: str
    reason: ExitReason
    attempt: int


@attrs.frozen(slots=True)
class Escalated:
    """The supervisor exceeded its restart intensity: it gives up and exits ``shutdown``.

    ``child_id`` and ``reason`` are the failure that tripped it (the last of
    ``history``); the exit reason does not carry them.
    """

    supervisor: str
    detail: str
    history: tuple[tuple[str, ExitReason], ...]
    child_id: str
    reason: ExitReason
    intensity: int
    period: float


@attrs.frozen(slots=True)
class StaleDetected:
    supervisor: str
    child_id: str
    path: str
    heartbeat_age: float
    last_activity: str | None


@attrs.frozen(slots=True)
class AutoShutdownTriggered:
    supervisor: str
    child_id: str


def publish(ctx: ActorContext, event: Any, level: int = logging.INFO) -> None:
    """Publish ``event`` on the system bus and log it with the supervisor's path."""
    ctx.system.events.publish(event)
    if log.isEnabledFor(level):
        log.log(level, "%s: %r", ctx.path, event)
