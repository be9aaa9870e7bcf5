"""The envelope a message travels in, and the one-shot reply slot of a ``call``.

Actor code never sees envelopes: it receives the bare message. The envelope holds
what a transport would need (sender address, reply address) so that a process or
network transport can be added later without touching actor code.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import outcome
import trio

if TYPE_CHECKING:
    from ._ref import ActorRef


class Envelope:
    """An ordinary message on its way to an actor."""

    __slots__ = ("message", "reply", "sender")

    def __init__(
        self, message: Any, sender: ActorRef | None = None, reply: ReplySlot | None = None
    ) -> None:
        self.message = message
        self.sender = sender
        self.reply = reply

    def __repr__(self) -> str:
        kind = "call" if self.reply is not None else "cast"
        return f"<Envelope {kind} {type(self.message).__name__}>"


class ReplySlot:
    """Where exactly one reply (a value or an error) goes, for exactly one waiter.

    A slot belongs to one call. Once the waiter gives up (timeout or cancellation)
    the slot is abandoned and any later reply is discarded, so a late reply can
    never reach a later call.
    """

    __slots__ = ("_outcome", "_task", "abandoned")

    def __init__(self) -> None:
        self._outcome: outcome.Outcome[Any] | None = None
        self._task: trio.lowlevel.Task | None = None
        self.abandoned = False

    @property
    def done(self) -> bool:
        """True once a reply was set or the waiter gave up."""
        return self._outcome is not None or self.abandoned

    def set_value(self, value: Any) -> bool:
        """Deliver a value; returns False if the slot was already resolved or abandoned."""
        return self._resolve(outcome.Value(value))

    def set_error(self, error: BaseException) -> bool:
        """Deliver an error; returns False if the slot was already resolved or abandoned."""
        return self._resolve(outcome.Error(error))

    def _resolve(self, result: outcome.Outcome[Any]) -> bool:
        if self.done:
            return False
        self._outcome = result
        if self._task is not None:
            task, self._task = self._task, None
            trio.lowlevel.reschedule(task, result)
        return True

    async def wait(self, deadline: float = math.inf) -> tuple[bool, Any]:
        """Wait for the reply until ``deadline`` (trio time).

        Returns ``(True, value)``, raises the delivered error, or returns
        ``(False, None)`` when the deadline passed (the slot is then abandoned).
        Outer cancellation abandons the slot and propagates.
        """
        if self._outcome is not None:
            await trio.lowlevel.checkpoint()
            return True, self._outcome.unwrap()
        if deadline == math.inf:
            return True, await self._park()  # no scope to enter: nothing to bound
        with trio.CancelScope(deadline=deadline) as scope:
            return True, await self._park()
        # Only reached when our own deadline fired; outer cancellation propagates.
        assert scope.cancelled_caught
        return False, None

    async def _park(self) -> Any:
        self._task = trio.lowlevel.current_task()

        def abort(_: Any) -> trio.lowlevel.Abort:
            self._task = None
            self.abandoned = True
            return trio.lowlevel.Abort.SUCCEEDED

        return await trio.lowlevel.wait_task_rescheduled(abort)
