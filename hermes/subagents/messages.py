"""The subagent supervisor's mailbox (besides the session verbs it is forwarded)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from actors import ActorRef, Call

from .outcome import RunOutcome
from .tasks import TaskSpec

if TYPE_CHECKING:  # named in the reply type (a string: ruff does not read it there)
    from hermes.session import Refused  # noqa: F401

    from .results import BatchResult, DelegationStarted  # noqa: F401


@attrs.frozen(slots=True)
class Delegate(Call["BatchResult | DelegationStarted | Refused"]):
    """Start a batch (call). Inline: answered with ``BatchResult`` when every task ended;
    background: answered at once with ``DelegationStarted``."""

    delegation_id: str
    tasks: tuple[TaskSpec, ...]
    background: bool = False
    context_used: int = 0
    """Tokens of the delegating session's context as of its latest reply (a value from
    its turn): each summary's cap comes from what is left of the window."""
    inline_if_full: bool = False
    """Background asked by code (seed #252): past ``max_background`` the batch runs inline
    (answered with its ``BatchResult``) instead of being refused."""


@attrs.frozen(slots=True)
class Abandon:
    """The inline caller of a batch went away (its tool call was cancelled): stop it (cast)."""

    delegation_id: str
    reason: str


@attrs.frozen(slots=True)
class Admitted:
    """The gate admitted a queued task (cast by the gate's callback)."""

    subagent_id: str


@attrs.frozen(slots=True)
class SessionUp(Call["str | None"]):
    """A driver's child session is running (call, from the driver): the supervisor records
    its ref (steers and interrupts go straight to it) and answers ``None`` to go on, or the
    reason of a stop asked for while the session was starting."""

    subagent_id: str
    session: ActorRef


@attrs.frozen(slots=True)
class ChildEnded:
    """A driver's result (cast, the last thing its body does, however it ends)."""

    subagent_id: str
    outcome: RunOutcome
    closed: bool = True
    """The driver closed its session; False: it failed or was cancelled, and the session
    is killed with it (the supervisor marks its row ended)."""


@attrs.frozen(slots=True)
class StopBackground(Call[int]):
    """The emergency stop went on (call, from the runtime): stop every background batch
    (running and queued tasks end ``interrupted`` with ``reason``); answered with the
    number of tasks stopped. Inline batches go on: their turn's owner decides."""

    reason: str


@attrs.frozen(slots=True)
class Check:
    """Periodic: liveness and clocks of the running children, pending deliveries."""


@attrs.frozen(slots=True)
class SubagentInfo:
    """One line of ``ListSubagents``."""

    subagent_id: str
    delegation_id: str
    goal: str
    state: str
    """queued, running, or the final status."""
    background: bool
    session_id: str | None
    iteration: int
    current_tool: str | None
    activity: str
    age: float
    """Seconds since it was queued (queued), started (running) or how long it ran."""
    queue_position: int = 0
    detail: str = ""
    """Why it ended (once finished)."""
