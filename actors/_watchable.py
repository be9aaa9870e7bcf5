"""``Watchable``: something other than an actor that ``ctx.monitor`` can watch.

A monitor is the runtime's way to be told about an end without polling. Actors
are watched by the cell itself; anything else that has a life worth watching (a
supervisor's child slot, which outlives each incarnation) implements this
protocol and delivers its notices with ``ActorRef.notify``. Each notice carries
the ``MonitorRef`` it answers as its ``monitor`` field, so ``ctx.demonitor(mref,
flush=True)`` can drop the ones still queued.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ._messages import MonitorRef
    from ._ref import ActorRef


@runtime_checkable
class Watchable(Protocol):
    """A monitor target that is not an actor."""

    def add_monitor(self, mref: MonitorRef, watcher: ActorRef) -> None:
        """Send ``watcher`` this target's notices for ``mref`` from now on.

        A target that has already ended sends its final notice at once (as a
        dead actor gives ``noproc``).
        """
        ...

    def remove_monitor(self, mref: MonitorRef) -> None:
        """Send nothing more for ``mref`` (a no-op if it is already gone)."""
        ...
