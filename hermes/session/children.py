"""The hook through which a session hosts child sessions (subagents).

``hermes.session`` does not know how subagents work; ``hermes.subagents``
implements ``ChildHost``. A session whose ``SessionDeps.subagents`` holds a
host asks it, when the session starts, for its children's supervisor (an actor
spawned as the session's own child, named ``subagents``) and the services its
tools need. From then on the session:

- forwards a soft ``Interrupt`` to the supervisor (cast: it interrupts the
  running children and stops the queued ones);
- calls ``Cancel`` on it after a hard cancel of the turn (it returns once
  every child subtree is gone, processes reaped), unless the supervisor says
  it is idle (``HostedChildren.idle``);
- forwards ``ListSubagents`` / ``SteerSubagent`` / ``StopSubagent`` (the
  owner's verbs) and relays the answer;
- stops it before anything else on close. It is linked: its crash fails the session,
  which its own supervisor restarts (``tree.POLICY``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from actors import ActorContext, ActorExited, ActorRef, CallTimeout, MailboxFull
from hermes.processes import ProcessService

from .config import SessionConfig
from .errors import InvalidInput, SessionError
from .events import EventHub
from .messages import Cancel, Interrupt

if TYPE_CHECKING:
    from .deps import SessionDeps

log = logging.getLogger(__name__)


@attrs.frozen(slots=True)
class ChildOwner:
    """What a host learns about the session that will own the children."""

    session_id: str
    config: SessionConfig
    deps: SessionDeps
    hub: EventHub
    processes: ProcessService | None = None
    """The owner's process service (children hand processes to it); None: it has none."""


@attrs.frozen(slots=True)
class HostedChildren:
    """A started children's supervisor and what the owner's tools get from it."""

    ref: ActorRef
    services: Mapping[type[Any], object] = attrs.field(factory=dict)
    idle: Callable[[], bool] | None = None
    """True while a hard stop would find nothing to stop (read synchronously)."""


class ChildHost(Protocol):
    """Starts the children's supervisor of one session (``None``: this session may not
    delegate, e.g. below the depth limit)."""

    async def start(self, ctx: ActorContext, owner: ChildOwner) -> HostedChildren | None: ...


CHILDREN_TIMEOUT = 30.0
"""Bound on a call to the children's supervisor (stopping every child included)."""


class SubagentLink:
    """A session's side of its children's supervisor: start, forward, stop (module docstring)."""

    def __init__(self, host: ChildHost | None, session_id: str) -> None:
        self.host = host
        self.session_id = session_id
        self.hosted: HostedChildren | None = None

    async def start(self, ctx: ActorContext, owner: ChildOwner) -> Mapping[type[Any], object]:
        """Start (or restart) the supervisor; the services its tools get (none without one)."""
        if self.host is None:
            return {}
        self.hosted = await self.host.start(ctx, owner)
        return self.hosted.services if self.hosted is not None else {}

    def is_supervisor(self, actor: ActorRef) -> bool:
        return self.hosted is not None and actor == self.hosted.ref

    @property
    def alive(self) -> bool:
        return self.hosted is not None and self.hosted.ref.is_alive

    def interrupt(self, reason: str) -> bool:
        """Forward a soft interrupt to the running children; whether this session has any."""
        if self.hosted is None:
            return False
        try:
            self.hosted.ref.cast_nowait(Interrupt(reason))
        except MailboxFull:
            log.warning("session %s: subagent supervisor busy, interrupt lost", self.session_id)
        return True

    async def call(self, message: object) -> object:
        """Forward a subagent verb and relay the answer."""
        if self.hosted is None:
            raise InvalidInput(f"session {self.session_id} has no subagents")
        try:
            return await self.hosted.ref.call(message, timeout=CHILDREN_TIMEOUT)
        except (ActorExited, CallTimeout) as error:
            raise SessionError(f"the subagent supervisor did not answer: {error}") from error

    async def cancel_all(self, reason: str) -> None:
        """Hard-stop every child (inline and background); returns when all are gone.

        Without the call when the supervisor says it is idle: a cancel then costs no
        round trip (the turn that could have delegated is already gone).
        """
        if not self.alive:
            return
        assert self.hosted is not None
        if self.hosted.idle is not None and self.hosted.idle():
            return
        try:
            await self.hosted.ref.call(Cancel(reason), timeout=CHILDREN_TIMEOUT)
        except (ActorExited, CallTimeout) as error:
            log.warning("session %s: stopping subagents failed: %s", self.session_id, error)

    async def stop(self) -> None:
        """Stop the supervisor; every child subtree is gone when this returns."""
        if self.alive:
            assert self.hosted is not None
            await self.hosted.ref.stop()
