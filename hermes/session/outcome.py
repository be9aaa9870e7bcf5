"""How a turn ended: ``TurnEnd`` and the ``TurnResult`` a session reports."""

from __future__ import annotations

import enum

import attrs

from hermes.model import Usage


class TurnEnd(enum.Enum):
    """Why a turn ended."""

    COMPLETED = "completed"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"
    MAX_ITERATIONS = "max_iterations"
    HALTED = "halted"
    """A guardrail stopped it (the same call and result repeated too often)."""
    UNKNOWN_TOOLS = "unknown_tools"
    FAILED = "failed"
    ROLLED_BACK = "rolled_back"


@attrs.frozen(slots=True)
class TurnResult:
    turn: int
    reason: TurnEnd
    text: str
    """The final assistant text (partial when interrupted or cancelled)."""
    detail: str = ""
    iterations: int = 0
    usage: Usage = attrs.field(factory=Usage)
    first_seq: int = 0
    """Seq of the message the turn's prompt went into."""
