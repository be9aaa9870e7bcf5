"""The running turn's control panel: steers, redirects and the soft interrupt.

The session owns the verbs' arrival (its mailbox); the running turn reads
them at its seams. ``TurnControls`` is the turn's: a bounded steer queue (a
full queue refuses with ``QueueFull``), the pending redirect, the interrupt
event (also what tools watch) and the scope of the model request in flight,
which a redirect or an interrupt cancels. The session holds only a
``TurnHandle`` on it: the verbs it may send (steer, redirect, interrupt),
whether a new prompt may interrupt now, and the steers left over once the
turn has exited; it reads none of the turn's state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

import trio

from .errors import QueueFull


class TurnControls:
    """Controls of one turn; used by the session (write) and the turn (read)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.steers: deque[str] = deque()
        self.redirects: list[str] = []
        self.interrupt = trio.Event()
        self.interrupt_reason = ""
        self.request_scope: trio.CancelScope | None = None
        """Set by the turn while a model request is in flight."""
        self.holds = 0
        """Work that must not be soft-interrupted by a new prompt (subagents, compression)."""
        self.context_used = 0
        """Tokens of the context as of the latest reply (prompt, cache and output)."""

    def steer(self, text: str) -> None:
        if len(self.steers) + len(self.redirects) >= self.capacity:
            raise QueueFull(f"{self.capacity} steers are already waiting for this turn")
        self.steers.append(text)

    def redirect(self, text: str) -> bool:
        """Cancel the model request in flight and reissue it with ``text``.

        Returns False (and queues ``text`` as a steer) when no request is in flight.
        """
        if self.request_scope is None:
            self.steer(text)
            return False
        if len(self.steers) + len(self.redirects) >= self.capacity:
            raise QueueFull(f"{self.capacity} steers are already waiting for this turn")
        self.redirects.append(text)
        self.request_scope.cancel()
        return True

    def soft_interrupt(self, reason: str) -> None:
        if not self.interrupt.is_set():
            self.interrupt_reason = reason
            self.interrupt.set()
        if self.request_scope is not None:
            self.request_scope.cancel()

    @property
    def interrupted(self) -> bool:
        return self.interrupt.is_set()

    def take_steers(self) -> list[str]:
        taken = list(self.steers)
        self.steers.clear()
        return taken

    def take_redirects(self) -> list[str]:
        taken, self.redirects = self.redirects, []
        return taken

    @contextmanager
    def hold_interrupt(self) -> Iterator[None]:
        """While entered, a new prompt in ``interrupt`` busy mode is queued instead."""
        self.holds += 1
        try:
            yield
        finally:
            self.holds -= 1


class TurnHandle:
    """The session's side of a running turn's controls: the verbs it sends, nothing more."""

    __slots__ = ("_controls",)

    def __init__(self, controls: TurnControls) -> None:
        self._controls = controls

    def steer(self, text: str) -> None:
        """Queue ``text`` for the turn's next seam (``QueueFull`` past the capacity)."""
        self._controls.steer(text)

    def redirect(self, text: str) -> bool:
        """Cut the model request in flight and reissue it with ``text``; False (queued as
        a steer) when none is in flight."""
        return self._controls.redirect(text)

    def interrupt(self, reason: str) -> None:
        """Soft-interrupt the turn: it ends at its next seam, ``interrupted``."""
        self._controls.soft_interrupt(reason)

    @property
    def interruptible(self) -> bool:
        """False while the turn holds off interrupts (subagents or compression in flight)."""
        return self._controls.holds == 0

    def leftovers(self) -> list[str]:
        """The steers sent after the turn settled (once it has exited): run as input."""
        return self._controls.take_steers()
