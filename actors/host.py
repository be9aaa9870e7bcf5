"""Child hosts: the nursery an actor's children run in.

An actor's children cannot run in a nursery inside the actor's own task: a
nursery waits for every child, so one child that ignores cancellation would
keep its parent from ever returning. Instead each parent owns a host: a small
task in the system's root nursery holding the children's nursery. The parent
controls it (spawn into it, cancel it, close it) and returns on time even if
an unkillable child keeps the host alive a while longer.
"""

from __future__ import annotations

import trio


class ChildHost:
    """The nursery holding one parent's children, and an event for "all gone"."""

    def __init__(self) -> None:
        self.nursery: trio.Nursery
        self._closed = trio.Event()
        self._empty_event: trio.Event | None = None

    async def run(
        self, *, task_status: trio.TaskStatus[ChildHost] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Body of the host task: hold the nursery open until closed or cancelled."""
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            task_status.started(self)
            await self._closed.wait()

    def cancel(self) -> None:
        """Cancel every child at once (the hard stop of a parent)."""
        self.nursery.cancel_scope.cancel(reason="parent is stopping")

    def close(self) -> None:
        """Let the host task end as soon as its last child has exited."""
        self._closed.set()

    def note_empty(self) -> None:
        """Called by the parent when its last child has exited (or been detached)."""
        if self._empty_event is not None:
            self._empty_event.set()
            self._empty_event = None

    def next_empty(self) -> trio.Event:
        """An event set when the parent next has no children left."""
        if self._empty_event is None:
            self._empty_event = trio.Event()
        return self._empty_event
