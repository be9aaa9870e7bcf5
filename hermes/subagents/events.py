"""Events a parent session publishes about its subagents (payloads of ``SessionEvent``)."""

from __future__ import annotations

import attrs

from hermes.model.types import Usage


@attrs.frozen(slots=True)
class SubagentQueued:
    """A task waits for a slot: ``position`` in the daemon-wide queue (1 = next)."""

    delegation_id: str
    subagent_id: str
    goal: str
    position: int


@attrs.frozen(slots=True)
class SubagentStarted:
    """A child was spawned; ``waited`` seconds in the admission queue (0 if none)."""

    delegation_id: str
    subagent_id: str
    goal: str
    waited: float


@attrs.frozen(slots=True)
class SubagentProgress:
    """A child began a model request (``iteration``) or a tool call (``tool``)."""

    subagent_id: str
    iteration: int
    tool: str | None
    activity: str


@attrs.frozen(slots=True)
class SubagentFinished:
    """A child ended: ``status`` is completed, failed, interrupted, stalled or timed_out;
    ``detail`` says why (a stalled child's last activity, a completed child's step cap
    or schema miss...)."""

    delegation_id: str
    subagent_id: str
    status: str
    detail: str
    duration: float
    summary_chars: int
    usage: Usage


@attrs.frozen(slots=True)
class DelegationCompleted:
    """Every task of a delegation has ended; a background one's result follows as input."""

    delegation_id: str
    background: bool
    statuses: tuple[str, ...]
    duration: float
