"""``ChildHandle``: a ref to a supervised child that survives its restarts.

Messages sent while the child restarts are stashed (up to the spec's
``stash_capacity``) and delivered in order to the new instance; beyond the cap,
and when the child will not come back, they become counted dead letters. An
actor can monitor the slot (``ctx.monitor(handle)``, see ``_slots.py``) to be told
of each restart and of the slot's end.
"""

from __future__ import annotations

import enum
from collections import deque
from typing import Any, TypeVar, overload

import trio

from actors import (
    ActorExited,
    ActorRef,
    Call,
    CallTimeout,
    DeadLetters,
    ExitReason,
    MailboxFull,
    MonitorRef,
    is_number,
)

from ._slots import SlotRemoved, SlotWatchers

R = TypeVar("R")


class ChildState(enum.Enum):
    RUNNING = "running"
    RESTARTING = "restarting"
    STOPPED = "stopped"


class ChildHandle:
    """Stable address of one supervised child across incarnations."""

    def __init__(
        self,
        child_id: str,
        path: str,
        stash_capacity: int,
        dead: DeadLetters,
        call_timeout: float = 5.0,
    ) -> None:
        self.call_timeout = call_timeout
        """Default ``call`` timeout (the actor system's)."""
        self.id = child_id
        self.path = path
        self.state = ChildState.STOPPED
        self.stash_capacity = stash_capacity
        self.stashed_total = 0
        self._ref: ActorRef | None = None
        self._stash: deque[Any] | None = None
        """Made at the first stashed message (an empty deque is ~600 bytes a child)."""
        self._changed = trio.Event()
        self._dead = dead
        self._watchers: SlotWatchers | None = None

    @property
    def ref(self) -> ActorRef | None:
        """The current incarnation (None while stopped or restarting)."""
        return self._ref if self.state is ChildState.RUNNING else None

    @property
    def stash_depth(self) -> int:
        return len(self._stash) if self._stash is not None else 0

    # -- used by the supervisor ----------------------------------------------------

    def bind(self, ref: ActorRef) -> None:
        """A new incarnation is up: deliver the stash in order, then route to it.

        If it replaces one that exited, the slot's monitors get ``SlotRestarted``.
        """
        old, self._ref = self._ref, ref
        self.state = ChildState.RUNNING
        while self._stash:
            message = self._stash.popleft()
            try:
                ref.cast_nowait(message)
            except MailboxFull:
                self._dead.record(ref.path, message, "stash replay refused (mailbox full)", None)
        self._signal_change()
        if self._watchers and old is not None and old != ref:
            # Replaced while still running only if it was reported unkillable.
            reason = old.exit_reason or ExitReason.unkillable(f"{old.path} did not exit")
            self._watchers.restarted(self, old, reason)

    def restarting(self) -> None:
        """The child is down and will be restarted: stash from now on."""
        self.state = ChildState.RESTARTING
        self._signal_change()

    def stopped(self) -> None:
        """The child will not come back (for now): the stash becomes dead letters.

        The slot's monitors get ``SlotRemoved`` and end.
        """
        self.state = ChildState.STOPPED
        last, self._ref = self._ref, None
        while self._stash:
            self._dead.record(self.path, self._stash.popleft(), "child stopped while stashed", None)
        self._signal_change()
        watchers, self._watchers = self._watchers, None
        if watchers:
            reason = last.exit_reason if last is not None else None
            watchers.removed(self, reason or ExitReason.noproc(f"{self.path} is not running"), last)

    def _signal_change(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # -- slot monitors (Watchable: ``ctx.monitor(handle)``) ---------------------------

    def add_monitor(self, mref: MonitorRef, watcher: ActorRef) -> None:
        """Tell ``watcher`` of each restart and of the slot's end (at once if it is down)."""
        if self.state is ChildState.STOPPED:
            reason = ExitReason.noproc(f"{self.path} is not running")
            watcher.notify(SlotRemoved(mref, self, reason))
            return
        if self._watchers is None:
            self._watchers = SlotWatchers()
        self._watchers.add(mref, watcher)

    def remove_monitor(self, mref: MonitorRef) -> None:
        """End a slot monitor (a no-op once it has ended)."""
        if self._watchers is not None:
            self._watchers.remove(mref)

    @property
    def monitors(self) -> int:
        """Slot monitors in place (watchers that exited may linger until the next sweep)."""
        return len(self._watchers) if self._watchers is not None else 0

    # -- used by clients -----------------------------------------------------------

    def _stashing(self) -> bool:
        if self.state is ChildState.RESTARTING:
            return True
        # Crashed but the supervisor has not processed the exit yet: it will decide.
        ref = self._ref
        return self.state is ChildState.RUNNING and ref is not None and not ref.is_alive

    async def cast(self, message: Any) -> bool:
        """Send to the current incarnation, or stash while it restarts."""
        # Decide and enqueue with no checkpoint in between: a restart that binds
        # the new incarnation during a checkpoint would strand a stashed message.
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._stashing():
            queued = self._stash_nowait(message)
            await trio.lowlevel.cancel_shielded_checkpoint()
            return queued
        ref = self._ref
        if ref is None:
            self._dead.record(self.path, message, "child not running", None)
            await trio.lowlevel.cancel_shielded_checkpoint()
            return False
        return await ref.cast(message)

    def _stash_nowait(self, message: Any) -> bool:
        stash = self._stash
        if stash is None:
            stash = self._stash = deque()
        if len(stash) >= self.stash_capacity:
            self._dead.record(self.path, message, "stash full during restart", None)
            return False
        stash.append(message)
        self.stashed_total += 1
        return True

    @overload
    async def call(self, message: Call[R], timeout: float | None = None) -> R: ...
    @overload
    async def call(self, message: object, timeout: float | None = None) -> Any: ...

    async def call(self, message: object, timeout: float | None = None) -> Any:
        """Call the current incarnation; while it restarts, wait (within ``timeout``).

        Typed like ``ActorRef.call``: ``R`` for a ``Call[R]`` request.

        Also waits while the child has died and its supervisor has not decided
        yet. A call still queued when an incarnation died was never handled, so
        it goes to the next incarnation. Raises ``ActorExited`` if the child is
        stopped for good or dies while handling this call, and ``CallTimeout``
        if no incarnation answered in time.
        """
        limit = self.call_timeout if timeout is None else timeout
        if not is_number(limit) or not limit > 0:
            raise ValueError(f"call timeout must be > 0 seconds, got {timeout!r}")
        deadline = trio.current_time() + limit
        while True:
            ref = self._ref
            if self.state is ChildState.RUNNING and ref is not None and ref.is_alive:
                remaining = max(deadline - trio.current_time(), 1e-6)
                try:
                    return await ref.call(message, timeout=remaining)
                except ActorExited as exc:
                    if exc.handled:
                        raise  # it died handling this very call: never sent twice
                    # Still queued when that incarnation died: wait for the
                    # supervisor's decision and send it to the next one.
                    continue
            if self.state is ChildState.STOPPED:
                await trio.lowlevel.checkpoint()
                raise ActorExited(self.path, ExitReason.noproc("child is not running"))
            changed = self._changed
            with trio.move_on_at(deadline):
                await changed.wait()
            if not changed.is_set():
                raise CallTimeout(self.path, limit, message)
