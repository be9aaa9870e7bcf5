"""The registry's pending ``Wait`` calls: deferred replies, each with its timeout timer.

A wait is answered when its process ends (``resolve``), at its timeout
(``WaitExpired``, sent by the registry's timer, then ``expire``), or when the
process is forgotten (its timers cancelled, the callers left to their own
deadlines). The registry owns this and every state it answers from.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import attrs

from actors import Reply, Timer

from .state import ProcessState, WaitOutcome, WaitResult


@attrs.frozen(slots=True)
class WaitExpired:
    """A wait's timeout (the registry's own timer message)."""

    process_id: str
    token: int


@attrs.define(slots=True, eq=False)
class _Waiter:
    reply: Reply
    token: int
    timer: Timer


class Waits:
    """Pending waits by process id; ``tail`` output characters go in each result."""

    def __init__(self, tail: int) -> None:
        self.tail = tail
        self._waiters: dict[str, list[_Waiter]] = {}
        self._tokens = itertools.count(1)

    def result(self, state: ProcessState, outcome: WaitOutcome) -> WaitResult:
        return WaitResult(state.info(), state.buffer.tail(self.tail), outcome)

    def waiting(self) -> list[str]:
        """The processes someone waits on."""
        return list(self._waiters)

    def add(self, process_id: str, reply: Reply, timer_of: Callable[[WaitExpired], Timer]) -> None:
        """Hold ``reply``; ``timer_of`` starts the timer that sends its ``WaitExpired``."""
        token = next(self._tokens)
        timer = timer_of(WaitExpired(process_id, token))
        self._waiters.setdefault(process_id, []).append(_Waiter(reply, token, timer))

    def expire(self, message: WaitExpired, state: ProcessState | None) -> None:
        """Answer the expired wait ``timeout`` (nothing if its process is gone)."""
        waiters = self._waiters.get(message.process_id, [])
        for waiter in waiters:
            if waiter.token == message.token:
                waiters.remove(waiter)
                if state is not None and not waiter.reply.caller_gave_up:
                    waiter.reply.send(self.result(state, WaitOutcome.TIMEOUT))
                break
        if not waiters:
            self._waiters.pop(message.process_id, None)

    def resolve(self, state: ProcessState) -> None:
        """Answer every wait on ``state``'s process: finished, or timeout if it runs on."""
        waiters = self._waiters.pop(state.id, [])
        if not waiters:
            return
        outcome = WaitOutcome.FINISHED if state.finished else WaitOutcome.TIMEOUT
        result = self.result(state, outcome)
        for waiter in waiters:
            waiter.timer.cancel()
            if not waiter.reply.caller_gave_up and waiter.reply.send(result) and state.finished:
                state.exit_seen = True

    def forget(self, process_id: str) -> None:
        """Drop the process's waits and cancel their timers (no answer)."""
        for waiter in self._waiters.pop(process_id, []):
            waiter.timer.cancel()
