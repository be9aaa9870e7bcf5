"""Notices the runtime delivers to actors, and the system signals behind them.

``Down``, ``Exit``, ``Stale`` and ``TaskEnded`` arrive through the system lane, ahead of
ordinary messages, and are passed to the actor's ``receive`` like any message; a
``Down``, ``Exit`` or ``TaskEnded`` never overtakes a message its actor sent before
it (per-pair order, see ``_mailbox.py``). The underscored classes never reach actor code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ._exits import ExitReason

if TYPE_CHECKING:
    from ._ref import ActorRef
    from ._tasks import OwnedTask
    from ._watchable import Watchable


@attrs.frozen(slots=True, eq=False)
class MonitorRef:
    """Identifies one monitor; pass it to ``demonitor``."""

    id: int
    target: ActorRef | Watchable


@attrs.frozen(slots=True)
class Down:
    """The monitored actor exited (``reason.kind`` is ``noproc`` if it was already dead)."""

    monitor: MonitorRef
    actor: ActorRef
    reason: ExitReason


@attrs.frozen(slots=True)
class Exit:
    """A linked actor (or a child) exited; delivered only to actors that trap exits."""

    actor: ActorRef
    reason: ExitReason


@attrs.frozen(slots=True)
class Stale:
    """A watched actor's heartbeat is older than its liveness spec allows."""

    actor: ActorRef
    heartbeat_age: float
    last_activity: str | None


@attrs.frozen(slots=True)
class TaskEnded:
    """An owned task started with ``notify=True`` ended: returned, or was cancelled.

    (A task that raises crashes its actor instead.) Like ``Down``, it is never
    lost to a full mailbox, so an actor can rely on it to learn that the work it
    handed to a task is over.
    """

    task: OwnedTask


@attrs.frozen(slots=True)
class _Stop:
    """Graceful stop request (system lane)."""

    reason: ExitReason


class _Probe:
    """Liveness probe (system lane): handling it refreshes the heartbeat."""

    __slots__ = ()


PROBE = _Probe()
