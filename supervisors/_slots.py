"""Slot monitors: watch a supervised child's slot (its ``ChildHandle``) across restarts.

``mref = self.ctx.monitor(handle)`` in an actor gives it one ``SlotRestarted`` each
time the supervisor replaces the child's incarnation, and one ``SlotRemoved`` when
the slot goes down for good, after which the monitor is gone. ``ctx.demonitor(mref)``
ends it earlier. Both notices come through the system lane like ``Down``: never
dropped, and never ahead of a message the supervisor or the old incarnation sent
the watcher before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from actors import ActorRef, ExitReason, MonitorRef

if TYPE_CHECKING:
    from ._handle import ChildHandle


@attrs.frozen(slots=True)
class SlotRestarted:
    """The supervisor restarted the slot: the old incarnation exited with ``reason``,
    and ``ref`` is the new one (already receiving the stash)."""

    monitor: MonitorRef
    handle: ChildHandle
    reason: ExitReason
    ref: ActorRef


@attrs.frozen(slots=True)
class SlotRemoved:
    """The slot is down and its supervisor will not start it again on its own: the
    child's restart type said no, it was terminated, its restart was abandoned, or
    the supervisor itself stopped. ``reason`` is the last incarnation's exit reason
    (``noproc`` if there was none). The monitor ends here."""

    monitor: MonitorRef
    handle: ChildHandle
    reason: ExitReason


class SlotWatchers:
    """The monitors on one slot, and who to tell. Watchers that exited without
    demonitoring are dropped when the set has doubled since the last sweep, so
    short-lived watchers of a long-lived slot do not pile up."""

    __slots__ = ("_sweep_at", "_watchers")

    def __init__(self) -> None:
        self._watchers: dict[MonitorRef, ActorRef] = {}
        self._sweep_at = 8

    def __len__(self) -> int:
        return len(self._watchers)

    def add(self, mref: MonitorRef, watcher: ActorRef) -> None:
        watchers = self._watchers
        watchers[mref] = watcher
        if len(watchers) > self._sweep_at:
            for dead in [m for m, w in watchers.items() if not w.is_alive]:
                del watchers[dead]
            self._sweep_at = max(8, 2 * len(watchers))

    def remove(self, mref: MonitorRef) -> None:
        self._watchers.pop(mref, None)

    def restarted(self, handle: ChildHandle, old: ActorRef, reason: ExitReason) -> None:
        """Tell every watcher that ``old`` was replaced by the handle's new incarnation."""
        new = handle.ref
        assert new is not None
        gone = []
        for mref, watcher in self._watchers.items():
            if not watcher.notify(SlotRestarted(mref, handle, reason, new), after=(old,)):
                gone.append(mref)
        for mref in gone:
            del self._watchers[mref]

    def removed(self, handle: ChildHandle, reason: ExitReason, last: ActorRef | None) -> None:
        """Tell every watcher that the slot is gone; this ends every monitor."""
        watchers, self._watchers = self._watchers, {}
        after = (last,) if last is not None else ()
        for mref, watcher in watchers.items():
            watcher.notify(SlotRemoved(mref, handle, reason), after=after)
