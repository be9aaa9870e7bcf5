"""Actor references: the only handle other code holds on an actor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, overload

import trio

from ._calls import Call, R
from ._checks import is_number
from ._current import current_cell
from ._envelope import Envelope, ReplySlot
from ._errors import ActorExited, CallTimeout, CallToSelf
from ._exits import ExitReason

if TYPE_CHECKING:
    from ._cell import ActorCell


_current_cell = current_cell.get


class ActorRef:
    """Names one actor incarnation by a unique id and its path in the tree.

    A ref stays valid after the actor exits: sends become dead letters, calls
    fail with ``ActorExited``, and ``exit_reason`` tells why it ended.
    """

    __slots__ = ("_cell", "id", "path")

    def __init__(self, cell: ActorCell) -> None:
        self._cell = cell
        self.id = cell.id
        self.path = cell.path

    @property
    def name(self) -> str:
        """The last path segment."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def is_alive(self) -> bool:
        """False once the actor has exited."""
        return self._cell.exit_reason is None

    @property
    def exit_reason(self) -> ExitReason | None:
        """Why the actor exited, or None while it runs."""
        return self._cell.exit_reason

    async def cast(self, message: Any) -> bool:
        """Send without waiting for a reply, obeying the mailbox's overflow policy.

        Under ``block`` it waits for space; under ``fail`` a full mailbox raises
        ``MailboxFull``. Returns False if the message became a dead letter
        (dropped by policy, or the actor is dead).
        """
        current = _current_cell()
        sender = current.ref if current is not None else None
        return await self._cell.mailbox.put(Envelope(message, sender))

    def cast_nowait(self, message: Any) -> bool:
        """Send without waiting at all; a full ``block`` mailbox raises ``MailboxFull``."""
        current = _current_cell()
        sender = current.ref if current is not None else None
        return self._cell.mailbox.put_nowait(Envelope(message, sender))

    @overload
    async def call(self, message: Call[R], timeout: float | None = None) -> R: ...
    @overload
    async def call(self, message: object, timeout: float | None = None) -> Any: ...

    async def call(self, message: object, timeout: float | None = None) -> Any:
        """Send and wait for the reply (default timeout: the system's, 5 s).

        The reply is typed ``R`` for a ``Call[R]`` request, ``Any`` otherwise.

        Raises ``CallTimeout`` when no reply came in time (a late reply is then
        discarded), ``ActorExited`` at once if the actor is dead or dies before
        replying, ``CallToSelf`` if an actor calls itself.
        """
        cell = self._cell
        current = _current_cell()
        if current is cell:
            raise CallToSelf(self.path)
        if timeout is None:
            timeout = cell.system.call_timeout
        elif not is_number(timeout) or not timeout > 0:
            raise ValueError(f"call timeout must be > 0 seconds, got {timeout!r}")
        if cell.exit_reason is not None:
            await trio.lowlevel.checkpoint()
            raise ActorExited(self.path, cell.exit_reason)
        deadline = trio.current_time() + timeout
        slot = ReplySlot()
        envelope = Envelope(message, current.ref if current is not None else None, slot)
        mailbox = cell.mailbox
        if mailbox.depth < mailbox.capacity or mailbox.closed:
            mailbox.put_nowait(envelope)
        else:
            # Backpressure: wait for space, within the same deadline. ``put`` only
            # checkpoints before queueing, so a caught timeout means not queued.
            with trio.move_on_at(deadline) as scope:
                await mailbox.put(envelope)
            if scope.cancelled_caught:
                raise CallTimeout(self.path, timeout, message)
        replied, value = await slot.wait(deadline)
        if not replied:
            raise CallTimeout(self.path, timeout, message)
        return value

    async def stop(
        self, reason: ExitReason | None = None, timeout: float | None = None
    ) -> ExitReason:
        """Stop gracefully and return the exit reason.

        Sends a stop request; the actor finishes its current message, stops its
        children and runs its stop hook. If it has not exited after ``timeout``
        (default: its shutdown budget) it is cancelled and reported ``killed``;
        if it does not even react to cancellation, ``unkillable`` is returned
        on time and the actor is left to finish on its own.
        """
        return await self._cell.stop(reason or ExitReason.shutdown(), timeout)

    async def kill(self, reason: ExitReason | None = None) -> ExitReason:
        """Hard stop: cancel the actor's scope now and return its exit reason.

        The default reason is ``cancelled`` by the calling actor (or ``None``).
        """
        if reason is None:
            current = _current_cell()
            reason = ExitReason.cancelled(by=current.path if current is not None else None)
        return await self._cell.kill_and_wait(reason)

    def notify(self, notice: Any, after: Iterable[ActorRef] = ()) -> bool:
        """Deliver a monitor's notice, for targets that are not actors (``Watchable``).

        It goes through the system lane: never dropped by the overflow policy and
        served ahead of ordinary messages, but never ahead of one that the calling
        actor, or an actor in ``after``, sent before it (per-pair order). Each
        notice must answer a monitor the actor asked for, at most one per event it
        reports, so the lane stays bounded. False if the actor has exited.
        """
        current = _current_cell()
        ids = tuple(ref.id for ref in after)
        if current is not None:
            ids += (current.id,)
        return self._cell.notify(notice, ids)

    async def wait_exited(self) -> ExitReason:
        """Wait until the actor exits and return why."""
        return await self._cell.wait_exited()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActorRef) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        state = "alive" if self.is_alive else "dead"
        return f"<ActorRef {self.path} #{self.id} {state}>"


async def kill_all(refs: Iterable[ActorRef], reason: ExitReason | None = None) -> list[ExitReason]:
    """Kill every actor in ``refs`` at once, then wait for each; their exit reasons, in order.

    Each gets what ``ActorRef.kill`` gives it (the system's kill grace, then it is
    reported unkillable), from one task: a supervisor stopping a hundred children
    does not need a hundred kill tasks. Refs of actors that already exited just
    report their reasons.
    """
    cells = [ref._cell for ref in refs]
    current = _current_cell()
    for cell in cells:
        cell.check_killable_by(current)
    if reason is None:
        reason = ExitReason.cancelled(by=current.path if current is not None else None)
    for cell in cells:
        cell.begin_kill(reason)
    await trio.lowlevel.checkpoint()
    return [await cell.wait_killed() for cell in cells]
