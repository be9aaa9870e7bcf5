"""``ChildHandle``: a ref to a supervised child that survives its restarts.

Messages sent while the child restarts are stashed (up to the spec's
``stash_capacity``) and delivered in order to the new instance; beyond the cap,
and when the child will not come back, they become counted dead letters.
"""

from __future__ import annotations

import enum
from collections import deque
from typing import Any

import trio

from actors import ActorExited, ActorRef, CallTimeout, DeadLetters, ExitReason, MailboxFull


class ChildState(enum.Enum):
    RUNNING = "running"
    RESTARTING = "restarting"
    STOPPED = "stopped"


class ChildHandle:
    """Stable address of one supervised child across incarnations."""

    def __init__(self, child_id: str, path: str, stash_capacity: int, dead: DeadLetters) -> None:
        self.id = child_id
        self.path = path
        self.state = ChildState.STOPPED
        self.stash_capacity = stash_capacity
        self.stashed_total = 0
        self._ref: ActorRef | None = None
        self._stash: deque[Any] = deque()
        self._ready = trio.Event()
        self._dead = dead

    @property
    def ref(self) -> ActorRef | None:
        """The current incarnation (None while stopped or restarting)."""
        return self._ref if self.state is ChildState.RUNNING else None

    @property
    def stash_depth(self) -> int:
        return len(self._stash)

    # -- used by the supervisor ----------------------------------------------------

    def bind(self, ref: ActorRef) -> None:
        """A new incarnation is up: deliver the stash in order, then route to it."""
        self._ref = ref
        self.state = ChildState.RUNNING
        while self._stash:
            message = self._stash.popleft()
            try:
                ref.cast_nowait(message)
            except MailboxFull:
                self._dead.record(ref.path, message, "stash replay refused (mailbox full)", None)
        self._ready.set()

    def restarting(self) -> None:
        """The child is down and will be restarted: stash from now on."""
        self.state = ChildState.RESTARTING
        if self._ready.is_set():
            self._ready = trio.Event()

    def stopped(self) -> None:
        """The child will not come back (for now): the stash becomes dead letters."""
        self.state = ChildState.STOPPED
        self._ref = None
        while self._stash:
            self._dead.record(self.path, self._stash.popleft(), "child stopped while stashed", None)
        self._ready.set()

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
        if len(self._stash) >= self.stash_capacity:
            self._dead.record(self.path, message, "stash full during restart", None)
            return False
        self._stash.append(message)
        self.stashed_total += 1
        return True

    async def call(self, message: Any, timeout: float | None = None) -> Any:
        """Call the current incarnation, waiting (within ``timeout``) for a restart to finish.

        If the child died and its supervisor has not yet decided, the caller is
        told at once (``ActorExited``) rather than left waiting.
        """
        limit = 5.0 if timeout is None else timeout
        deadline = trio.current_time() + limit
        if self.state is ChildState.RESTARTING:
            with trio.move_on_at(deadline):
                await self._ready.wait()
            if self.state is ChildState.RESTARTING:
                raise CallTimeout(self.path, limit, message)
        ref = self._ref
        if ref is None or self.state is ChildState.STOPPED:
            await trio.lowlevel.checkpoint()
            raise ActorExited(self.path, ExitReason.noproc("child is not running"))
        remaining = max(deadline - trio.current_time(), 1e-6)
        return await ref.call(message, timeout=remaining)
