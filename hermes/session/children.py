"""The hook through which a session hosts child sessions (subagents).

``hermes.session`` does not know how subagents work; ``hermes.subagents``
implements ``ChildHost``. A session whose ``SessionDeps.subagents`` holds a
host asks it, when the session starts, for its children's supervisor (an actor
spawned as the session's own child, named ``subagents``) and the services its
tools need. From then on the session:

- forwards a soft ``Interrupt`` to the supervisor (cast: it interrupts the
  running children and stops the queued ones);
- calls ``Cancel`` on it after a hard cancel of the turn (it returns once
  every child subtree is gone, processes reaped);
- forwards ``ListSubagents`` / ``SteerSubagent`` / ``StopSubagent`` (the
  owner's verbs) and relays the answer;
- stops it before anything else on close, and starts a new one if it crashes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from actors import ActorContext, ActorRef
from hermes.processes import ProcessService

from .config import SessionConfig
from .events import EventHub

if TYPE_CHECKING:
    from .session import SessionDeps


@attrs.frozen(slots=True)
class ChildOwner:
    """What a host learns about the session that will own the children."""

    session_id: str
    config: SessionConfig
    deps: SessionDeps
    hub: EventHub
    remaining_context: Callable[[], int]
    """Tokens left in the owner's context window (as of its latest reply)."""
    processes: Callable[[], ProcessService | None] | None = None
    """The owner's process service now (children hand processes to it); None: it has none."""


@attrs.frozen(slots=True)
class HostedChildren:
    """A started children's supervisor and what the owner's tools get from it."""

    ref: ActorRef
    services: Mapping[type[Any], object] = attrs.field(factory=dict)


class ChildHost(Protocol):
    """Starts the children's supervisor of one session (``None``: this session may not
    delegate, e.g. below the depth limit)."""

    async def start(self, ctx: ActorContext, owner: ChildOwner) -> HostedChildren | None: ...
