"""A bounded publish/subscribe bus for runtime events.

Publishing never blocks: each subscriber has its own bounded buffer, and an
event that does not fit is dropped for that subscriber and counted in its
``lagged`` counter. Events are also logged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import trio

from ._exits import ExitReason

log = logging.getLogger("actors")


@attrs.frozen(slots=True)
class ActorStarted:
    path: str
    actor_class: str
    restarts: int


@attrs.frozen(slots=True)
class ActorExitedEvent:
    path: str
    actor_class: str
    reason: ExitReason


@attrs.frozen(slots=True)
class DeadLetter:
    """A message that could not be delivered, and why."""

    recipient: str
    message: Any
    reason: str
    sender: str | None


@attrs.frozen(slots=True)
class UnkillableReported:
    """An actor did not exit after being cancelled; its owner moved on without it."""

    path: str
    detail: str


@attrs.frozen(slots=True)
class UnkillableFinished:
    """An actor reported unkillable finally exited."""

    path: str
    reason: ExitReason


@attrs.frozen(slots=True)
class LoopStall:
    """The trio event loop did not run for ``duration`` seconds."""

    duration: float
    report: str


class Subscription:
    """One subscriber's bounded view of the bus."""

    def __init__(self, capacity: int) -> None:
        self._send, self.receive = trio.open_memory_channel[Any](capacity)
        self.lagged = 0

    def offer(self, event: Any) -> None:
        try:
            self._send.send_nowait(event)
        except trio.WouldBlock:
            self.lagged += 1

    def close(self) -> None:
        self._send.close()

    def drain(self) -> list[Any]:
        """Everything buffered right now, without waiting."""
        out = []
        while True:
            try:
                out.append(self.receive.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel):
                return out


class EventBus:
    """Fan-out of runtime events to bounded subscribers."""

    def __init__(self) -> None:
        self._subscribers: list[Subscription] = []
        self.published = 0

    @contextmanager
    def subscribe(self, capacity: int = 1000) -> Iterator[Subscription]:
        """Receive events published while the block is open (at most ``capacity`` buffered)."""
        if capacity < 1:
            raise ValueError(f"subscription capacity must be >= 1, got {capacity!r}")
        sub = Subscription(capacity)
        self._subscribers.append(sub)
        try:
            yield sub
        finally:
            self._subscribers.remove(sub)
            sub.close()

    @property
    def has_subscribers(self) -> bool:
        """True if anyone listens (publishers may skip building events otherwise)."""
        return bool(self._subscribers)

    def publish(self, event: Any) -> None:
        """Offer ``event`` to every subscriber; never blocks."""
        self.published += 1
        for sub in self._subscribers:
            sub.offer(event)
