"""Background results on their way to the parent session: recorded, pushed, retried.

A background batch's text is recorded in the store (``delegations``) when it
ends, then pushed into the owning session's mailbox as ``MachineInput`` (a
new turn when it is idle; queued when busy); the session marks it delivered
once a turn took it. A full mailbox is retried on the supervisor's next
``Check``. When a supervisor starts, results a previous daemon finished but
never delivered are delivered, and delegations it was still running are
reported lost (their children died with it). While the emergency stop is on
(``held``) nothing is pushed: a result would start a turn; each ``Check``
looks again, so results go out within one check of ``hermes resume``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from actors import ActorRef, MailboxFull
from hermes.session import ChildOwner, MachineInput
from hermes.session import events as session_events
from hermes.store import StoreError

log = logging.getLogger(__name__)

LOST_TEXT = (
    "[Background delegation {id} was lost: the daemon stopped while it ran, and its "
    "subagents with it. Goals: {goals}. Nothing of their work was reported; run them again "
    "if they are still needed.]"
)


class Deliveries:
    """One supervisor's background results for its owner (owned by that supervisor)."""

    def __init__(self, owner: ChildOwner, held: Callable[[], bool] = lambda: False) -> None:
        self.owner = owner
        self.held = held
        """True while results must wait (the emergency stop is on)."""
        self._pending: list[MachineInput] = []

    async def recover(self, parent: ActorRef | None) -> None:
        """Deliver what a previous daemon finished; report what it was running as lost."""
        store = self.owner.deps.store
        try:
            pending = await store.list_delegations(self.owner.session_id, pending_only=True)
        except StoreError as error:
            log.warning("subagents of %s: recovery failed: %s", self.owner.session_id, error)
            return
        for record in pending:
            text = record.result
            if record.status == "running":
                text = LOST_TEXT.format(id=record.id, goals=record.goals)
                try:
                    await store.record_delegation_finish(record.id, text)
                except StoreError as error:
                    log.warning("subagents: could not mark %s lost: %s", record.id, error)
            if text is not None:
                self.deliver(record.id, text, parent)

    async def record_start(self, delegation_id: str, goals: str) -> None:
        try:
            await self.owner.deps.store.record_delegation_start(
                delegation_id, self.owner.session_id, goals
            )
        except StoreError as error:
            log.warning(
                "subagents: background delegation %s not recorded: %s", delegation_id, error
            )

    async def finished(
        self, delegation_id: str, text: str, parent: ActorRef | None, *, hard_stopped: bool
    ) -> None:
        """Record a background batch's text; deliver it unless its owner stopped everything."""
        store = self.owner.deps.store
        try:
            await store.record_delegation_finish(delegation_id, text)
            if hard_stopped:  # the owner stopped everything: no new turn for it
                await store.record_delegation_delivered(delegation_id)
        except StoreError as error:
            log.warning("subagents: result of %s not recorded: %s", delegation_id, error)
        if not hard_stopped:
            self.deliver(delegation_id, text, parent)

    def deliver(self, delegation_id: str, text: str, parent: ActorRef | None) -> None:
        """Push a result into the owner's mailbox (retried by ``flush`` while it is full)."""
        store = self.owner.deps.store

        async def delivered() -> None:
            await store.record_delegation_delivered(delegation_id)

        notice = session_events.InputNoticed("subagents", delegation_id, text)
        self._pending.append(MachineInput("subagents", text, notice, delivered))
        self.flush(parent)

    def flush(self, parent: ActorRef | None) -> None:
        if self._pending and self.held():
            return
        while self._pending and parent is not None:
            try:
                parent.cast_nowait(self._pending[0])
            except MailboxFull:
                return
            self._pending.pop(0)
