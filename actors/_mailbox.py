"""Bounded two-lane mailboxes with an overflow policy and statistics.

The system lane (stop requests, exit signals, Down notices, liveness probes)
is always served first and never drops: its size is bounded by construction,
since a stop is coalesced, a probe is coalesced and each monitor or link
delivers at most one notice. The ordinary lane holds at most ``capacity``
envelopes; what happens beyond that is the mailbox's ``Overflow`` policy.

The fast lane never reorders a pair of actors. A notice about an actor (its
``Down`` or ``Exit``, put with ``put_notice``) that still has ordinary messages
queued here rides behind the last of them: that envelope is wrapped in a
``_Held`` with the notice, and taking it out moves the notice to the system
lane, served next. So a notice never overtakes what its actor sent before it,
and the hot path pays one type check per message.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ._checks import is_count
from ._envelope import Envelope
from ._errors import MailboxFull

if TYPE_CHECKING:
    from ._ref import ActorRef


class Overflow(enum.Enum):
    """What a full ordinary lane does with one more message."""

    BLOCK = "block"
    """The sender waits for space (backpressure). The default."""
    DROP_NEWEST = "drop_newest"
    """The new message becomes a dead letter."""
    DROP_OLDEST = "drop_oldest"
    """The oldest queued message becomes a dead letter; the new one is queued."""
    FAIL = "fail"
    """The sender gets ``MailboxFull``."""


def _positive_capacity(_: Any, attribute: attrs.Attribute[int], value: int) -> None:
    if not is_count(value) or value < 1:
        raise ValueError(f"mailbox {attribute.name} must be an int >= 1, got {value!r}")


def _overflow_policy(_: Any, attribute: attrs.Attribute[Overflow], value: Overflow) -> None:
    if not isinstance(value, Overflow):
        raise ValueError(
            f"mailbox {attribute.name} must be one of {[p.value for p in Overflow]}, got {value!r}"
        )


@attrs.frozen(slots=True)
class MailboxConfig:
    """Capacity and overflow policy of one actor's mailbox."""

    capacity: int = attrs.field(default=1000, validator=_positive_capacity)
    overflow: Overflow = attrs.field(default=Overflow.BLOCK, validator=_overflow_policy)


@attrs.frozen(slots=True)
class MailboxStats:
    """A snapshot of a mailbox's counters."""

    depth: int
    system_depth: int
    high_water: int
    received: int
    dropped: int
    capacity: int
    overflow: str


DROPPED_NEWEST = "dropped as newest (mailbox full)"
DROPPED_OLDEST = "dropped as oldest (mailbox full)"
RECIPIENT_EXITED = "recipient exited"

DropHandler = Callable[[Envelope, str], None]
"""Called with an envelope the mailbox could not keep and a short reason."""


class _Held:
    """An ordinary envelope with the notices that must not be served before it."""

    __slots__ = ("envelope", "notices")

    def __init__(self, envelope: Envelope, notice: Any) -> None:
        self.envelope = envelope
        self.notices = [notice]

    @property
    def sender(self) -> ActorRef | None:
        return self.envelope.sender


class Mailbox:
    """A bounded mailbox with one receiver (the actor) and any number of senders."""

    __slots__ = (
        "_queue",
        "_receiver",
        "_senders",
        "_system",
        "capacity",
        "closed",
        "dropped",
        "high_water",
        "on_drop",
        "overflow",
        "path",
        "received",
    )

    def __init__(self, path: str, config: MailboxConfig, on_drop: DropHandler) -> None:
        self.path = path
        self.capacity = config.capacity
        self.overflow = config.overflow
        self.on_drop = on_drop
        # Lanes are created on first use: an empty deque costs ~760 bytes and most
        # idle actors never see a system message.
        self._queue: deque[Envelope | _Held] | None = None
        self._system: deque[Any] | None = None
        self._receiver: trio.lowlevel.Task | None = None
        self._senders: trio.lowlevel.ParkingLot | None = None
        self.received = 0
        self.dropped = 0
        self.high_water = 0
        self.closed = False

    # -- statistics -----------------------------------------------------------------

    @property
    def depth(self) -> int:
        """Ordinary messages waiting."""
        return len(self._queue) if self._queue is not None else 0

    @property
    def system_depth(self) -> int:
        """System messages waiting (counting notices held behind ordinary messages)."""
        depth = len(self._system) if self._system is not None else 0
        if self._queue:
            depth += sum(len(item.notices) for item in self._queue if isinstance(item, _Held))
        return depth

    def stats(self) -> MailboxStats:
        """Counters as a frozen value."""
        return MailboxStats(
            depth=self.depth,
            system_depth=self.system_depth,
            high_water=self.high_water,
            received=self.received,
            dropped=self.dropped,
            capacity=self.capacity,
            overflow=self.overflow.value,
        )

    # -- sending --------------------------------------------------------------------

    def put_system(self, item: Any) -> bool:
        """Queue a system message ahead of ordinary ones. False if the mailbox is closed."""
        if self.closed:
            return False
        if self._system is None:
            self._system = deque()
        self._system.append(item)
        self.wake_receiver()
        return True

    def put_notice(self, notice: Any, after: tuple[int, ...]) -> bool:
        """Queue a notice in the system lane, but behind any ordinary message from ``after``.

        ``after`` holds the ids of the actors the notice is about or comes from
        (a dead actor, the supervisor reporting a restart). If one of them still
        has a message queued here, the notice waits behind the last such
        message, so per-pair order holds. False if the mailbox is closed.
        """
        if self.closed:
            return False
        queue = self._queue
        if queue and after:
            index = len(queue)
            for item in reversed(queue):
                index -= 1
                sender = item.sender
                if sender is not None and sender.id in after:
                    if isinstance(item, _Held):
                        item.notices.append(notice)
                    else:
                        queue[index] = _Held(item, notice)
                    return True
        return self.put_system(notice)

    def remove_first_system(self, predicate: Callable[[Any], bool]) -> bool:
        """Remove the first queued system message matching ``predicate``; whether one was.

        For a notice known to be queued at most once (a monitor's ``Down``). Notices
        are usually flushed in about the order they were queued, so the scan stops
        near the front: a supervisor demonitoring 100 exited children with 200
        notices queued rebuilt the lane 100 times before (~3 ms of a mass cancel).
        Notices held behind ordinary messages are searched next.
        """
        system = self._system
        if system:
            for index, message in enumerate(system):
                if predicate(message):
                    del system[index]
                    return True
        if self._queue:
            for item in self._queue:
                if isinstance(item, _Held):
                    for index, notice in enumerate(item.notices):
                        if predicate(notice):
                            del item.notices[index]
                            return True
        return False

    def remove_system(self, predicate: Callable[[Any], bool]) -> int:
        """Remove queued system messages (held ones too) matching ``predicate``; how many."""
        removed = 0
        if self._system:
            kept = [m for m in self._system if not predicate(m)]
            removed = len(self._system) - len(kept)
            self._system = deque(kept)
        if self._queue:
            for item in self._queue:
                if isinstance(item, _Held):
                    notices = [n for n in item.notices if not predicate(n)]
                    removed += len(item.notices) - len(notices)
                    item.notices = notices
        return removed

    def put_nowait(self, envelope: Envelope, *, block_raises: bool = True) -> bool:
        """Queue an ordinary message without waiting, applying the overflow policy.

        Returns True if queued, False if it was dropped (and handed to ``on_drop``).
        Raises ``MailboxFull`` under ``FAIL``, and under ``BLOCK`` when
        ``block_raises`` (a non-blocking send cannot wait for space).
        """
        if self.closed:
            self.on_drop(envelope, RECIPIENT_EXITED)
            return False
        queue = self._queue
        if queue is None:
            queue = self._queue = deque()
        if len(queue) >= self.capacity:
            policy = self.overflow
            if policy is Overflow.DROP_OLDEST:
                self._drop(self._unhold(queue.popleft()), DROPPED_OLDEST)
            elif policy is Overflow.DROP_NEWEST or (policy is Overflow.BLOCK and not block_raises):
                self._drop(envelope, DROPPED_NEWEST)
                return False
            else:
                raise MailboxFull(self.path, self.capacity)
        queue.append(envelope)
        self.received += 1
        if len(queue) > self.high_water:
            self.high_water = len(queue)
        self.wake_receiver()
        return True

    async def put(self, envelope: Envelope) -> bool:
        """Queue an ordinary message, waiting for space under ``BLOCK``.

        Always a checkpoint. Returns False if the message became a dead letter.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        if self.overflow is Overflow.BLOCK:
            while not self.closed and self._queue is not None and len(self._queue) >= self.capacity:
                if self._senders is None:
                    self._senders = trio.lowlevel.ParkingLot()
                await self._senders.park()
        queued = self.put_nowait(envelope)
        await trio.lowlevel.cancel_shielded_checkpoint()
        return queued

    def _drop(self, envelope: Envelope, reason: str) -> None:
        self.dropped += 1
        self.on_drop(envelope, reason)

    # -- receiving ------------------------------------------------------------------

    def get_nowait(self) -> Any | None:
        """Next message: a system message first, else an ordinary envelope, else None."""
        if self._system:
            return self._system.popleft()
        queue = self._queue
        if queue:
            envelope = queue.popleft()
            if self._senders is not None and self._senders:
                self._senders.unpark()
            if isinstance(envelope, _Held):
                return self._unhold(envelope)
            return envelope
        return None

    def _unhold(self, item: Envelope | _Held) -> Envelope:
        """An envelope leaving the lane: the notices held behind it go to the system lane."""
        if not isinstance(item, _Held):
            return item
        if item.notices:
            if self._system is None:
                self._system = deque()
            self._system.extend(item.notices)
        return item.envelope

    async def wait(self, deadline: float = math.inf) -> None:
        """Park the receiver until a message arrives or ``deadline`` (trio time) passes.

        The caller must have found the mailbox empty with no checkpoint since.
        """
        if deadline == math.inf:
            self._receiver = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(self._abort_wait)
            return
        with trio.CancelScope(deadline=deadline):
            self._receiver = trio.lowlevel.current_task()
            await trio.lowlevel.wait_task_rescheduled(self._abort_wait)

    def _abort_wait(self, _: Any) -> trio.lowlevel.Abort:
        self._receiver = None
        return trio.lowlevel.Abort.SUCCEEDED

    @property
    def receiver_parked(self) -> bool:
        """True while the receiver waits in ``wait`` (the actor is idle)."""
        return self._receiver is not None

    def wake_receiver(self) -> None:
        """Wake the parked receiver, if any (also used when a timer is added)."""
        task = self._receiver
        if task is not None:
            self._receiver = None
            trio.lowlevel.reschedule(task)

    def close(self) -> list[Envelope]:
        """Refuse further messages; return the ordinary ones still queued.

        Blocked senders wake up and see the closed mailbox (their message becomes
        a dead letter). Queued system messages are discarded: they concern a
        recipient that no longer exists.
        """
        self.closed = True
        leftover = [
            item.envelope if isinstance(item, _Held) else item for item in self._queue or ()
        ]
        self._queue = None
        self._system = None
        if self._senders is not None:
            self._senders.unpark_all()
        return leftover
