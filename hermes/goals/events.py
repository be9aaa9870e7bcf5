"""What the goal keeper tells a session's subscribers (``goal.updated``, ``loop.updated``)."""

from __future__ import annotations

import attrs


@attrs.frozen(slots=True, kw_only=True)
class GoalUpdated:
    """The goal changed: set, judged, paused, resumed, done or cleared."""

    status: str
    """active, paused, done or cleared."""
    message: str
    """A line for the person (what happened, and what they can do next)."""
    verdict: str | None = None
    reason: str | None = None
    turns_used: int = 0
    max_turns: int = 0
    goal: str = ""


@attrs.frozen(slots=True, kw_only=True)
class LoopUpdated:
    """The loop changed: set, woke, paused, resumed, done or stopped."""

    status: str
    message: str
    ticks: int = 0
    prompt: str = ""


@attrs.frozen(slots=True)
class GoalReplied:
    """The answer to a person's ``/goal``, ``/subgoal`` or ``/loop`` prompt."""

    output: str
