"""``SpawnGate``: the daemon-wide admission of children, with one FIFO queue.

Two limits hold at once: each parent runs at most ``max_concurrent_children``
(its ``ParentSlots``) and the daemon at most ``max_total_children``. A task
that finds a slot under both starts at once; otherwise it waits in one
bounded, daemon-wide queue. Whenever a slot frees up the queue is scanned in
order and every task whose parent has room is admitted while the daemon has
room, so tasks start in the order they asked, per parent and across parents.

The gate is plain code on the event loop (no task, no lock): admission calls
the ticket's ``on_admit`` callback, which must not block (the supervisor
forwards it to its own mailbox). The slot is counted from that moment, so the
limits can never be overshot by a message in flight.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

import trio

from supervisors import Admission

from .errors import AtCapacity, SpawningPaused

ESTOP_REFUSAL = (
    "The emergency stop is on (an operator ran `hermes pause`): no subagent may start "
    "until `hermes resume`. Nothing was started; do the work yourself or try again later."
)
ESTOP_STOPPED = (
    "stopped by the emergency stop (an operator ran `hermes pause`); it is not restarted "
    "by `hermes resume`: delegate it again if it is still needed"
)
"""The reason a running background task ends with when the emergency stop goes on."""


class ParentSlots:
    """One parent's share: ``running`` of at most ``limit`` children."""

    __slots__ = ("limit", "running")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0

    @property
    def free(self) -> int:
        return max(0, self.limit - self.running)


class Ticket:
    """One task's place at the gate: waiting, admitted, or released."""

    __slots__ = ("admitted", "key", "on_admit", "parent", "queued_at", "released")

    def __init__(self, key: str, parent: ParentSlots, on_admit: Callable[[Ticket], bool]) -> None:
        self.key = key
        self.parent = parent
        self.on_admit = on_admit
        """Called when the ticket is admitted from the queue; False: nobody took it."""
        self.queued_at: float | None = None
        self.admitted = False
        self.released = False


class SpawnGate:
    """Daemon-wide admission; see the module docstring."""

    def __init__(
        self, capacity: int, queue_capacity: int, admission: Admission = Admission.QUEUE
    ) -> None:
        self.capacity = capacity
        self.queue_capacity = queue_capacity
        self.admission = admission
        self.running = 0
        self.paused = False
        """Set by an operator: no new delegation is accepted (running ones go on)."""
        self.estop: Path | None = None
        """The emergency stop's file (``hermes pause``): while it exists nothing new is
        accepted, as when paused, and background results wait (see ``stopped``)."""
        self._queue: deque[Ticket] = deque()
        self.admitted_total = 0
        self.high_water = 0

    @property
    def queued(self) -> int:
        return len(self._queue)

    def position(self, ticket: Ticket) -> int:
        """1-based place of a waiting ticket in the daemon-wide queue (0 if not waiting)."""
        for index, waiting in enumerate(self._queue, 1):
            if waiting is ticket:
                return index
        return 0

    def stopped(self) -> bool:
        """The emergency stop is on: its file exists (whatever it holds, seed #218)."""
        return self.estop is not None and self.estop.exists()

    def check_open(self) -> None:
        if self.stopped():
            raise SpawningPaused(ESTOP_REFUSAL)
        if self.paused:
            raise SpawningPaused(
                "Spawning subagents is paused by the operator. Nothing was started; do the "
                "work yourself or try again later."
            )

    def submit(self, tickets: Sequence[Ticket]) -> list[Ticket]:
        """Admit what fits now and queue the rest (all or nothing); returns the queued ones.

        ``AtCapacity`` (nothing admitted) when admission rejects and not every
        ticket fits, or when the rest would overflow the queue.
        """
        self.check_open()
        if not tickets:
            return []
        parent = tickets[0].parent
        fits = min(parent.free, self.capacity - self.running)
        if self._queue_blocks(parent):
            fits = 0  # earlier tasks of this parent wait: keep its order
        rest = len(tickets) - max(fits, 0)
        if rest > 0 and self.admission is Admission.REJECT:
            raise AtCapacity(
                f"Only {max(fits, 0)} of {len(tickets)} subagents can start now ({parent.running} "
                f"of {parent.limit} running for this session, {self.running} of {self.capacity} "
                "in the daemon) and admission is set to reject. Nothing was started; send "
                "fewer tasks or wait for running ones to finish."
            )
        if rest > self.queue_capacity - len(self._queue):
            raise AtCapacity(
                f"The admission queue is full ({len(self._queue)} of {self.queue_capacity} "
                f"waiting); {rest} more tasks cannot wait. Nothing was started."
            )
        now = trio.current_time()
        queued = []
        for ticket in tickets:
            if fits > 0:
                fits -= 1
                self._take(ticket)
            else:
                ticket.queued_at = now
                self._queue.append(ticket)
                queued.append(ticket)
        return queued

    def _queue_blocks(self, parent: ParentSlots) -> bool:
        return any(t.parent is parent for t in self._queue)

    def _take(self, ticket: Ticket) -> None:
        ticket.admitted = True
        ticket.parent.running += 1
        self.running += 1
        self.admitted_total += 1
        self.high_water = max(self.high_water, self.running)

    def release(self, ticket: Ticket) -> None:
        """The ticket's child ended (or it never started): free its slot; admit waiters."""
        if ticket.released:
            return
        ticket.released = True
        if ticket.admitted:
            ticket.parent.running -= 1
            self.running -= 1
            self._pump()
        else:
            self.withdraw(ticket)

    def withdraw(self, ticket: Ticket) -> None:
        """Take a waiting ticket out of the queue (its batch was stopped)."""
        with contextlib.suppress(ValueError):
            self._queue.remove(ticket)
        ticket.released = True

    def _pump(self) -> None:
        if not self._queue:
            return
        blocked: set[int] = set()
        for ticket in list(self._queue):
            if self.running >= self.capacity:
                return
            if ticket.admitted or ticket.released:
                continue  # handled by a nested pump (an admission nobody took)
            parent = ticket.parent
            if id(parent) in blocked or parent.free <= 0:
                blocked.add(id(parent))  # its later tasks wait behind this one
                continue
            self._queue.remove(ticket)
            self._take(ticket)
            if not ticket.on_admit(ticket):
                self.release(ticket)
