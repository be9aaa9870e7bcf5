"""How a turn ended: ``TurnEnd`` and the ``TurnResult`` a session reports."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import attrs

from hermes.model import Message, Usage

if TYPE_CHECKING:
    from .context_keeper import ContextKeeper


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
    undelivered: tuple[str, ...] = ()
    """Steers the turn could not deliver; the session runs them as the next input."""
    compacted: bool = False
    """The transcript was compacted during the turn (it cannot be rolled back then)."""
    context_used: int = 0
    """Tokens of the context as of the turn's latest reply (0: it had none)."""


@attrs.frozen(slots=True)
class TurnDone:
    """A turn task's value: how it ended and the transcript its own copy ended with."""

    result: TurnResult
    messages: tuple[Message, ...] | None
    """What the session adopts; None when the turn left nothing to trust (it never
    settled, or outlived its kill): the session reloads from the store then."""
    dirty: bool = False
    """A write of the turn may have half-happened: the session reloads first."""
    keeper: ContextKeeper | None = None
    """The turn's ``ContextKeeper`` copy as it ended (its prompt, meter and policy), which
    the session adopts; None when the turn gave nothing (the session keeps its own)."""


class TurnCrashed(Exception):
    """A turn's crash, carrying what its settle step recorded (``done``)."""

    def __init__(self, done: TurnDone) -> None:
        super().__init__(done.result.detail)
        self.done = done
