"""What a session's mailbox accepts (the verbs) and what it answers.

Refusals travel back as ``Refused`` values and are raised in the caller by
``SessionHandle``: a bad request never crashes the session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from actors import Call
from hermes.model.types import Usage
from hermes.tools import ApprovalChoice

from .config import BusyMode

if TYPE_CHECKING:  # named in the reply types (strings: ruff does not read them there)
    from .events import EventHub  # noqa: F401
    from .outcome import TurnResult  # noqa: F401
    from .session import Cancelled  # noqa: F401


@attrs.frozen(slots=True)
class Prompt(Call["Accepted | TurnResult | Refused"]):
    text: str
    mode: BusyMode | None = None
    """Overrides the session's busy mode for this prompt."""
    wait: bool = False
    """Answer with the ``TurnResult`` of the turn that ran it, not at once (an
    ``Accepted`` otherwise)."""


@attrs.frozen(slots=True)
class Steer(Call["Accepted | Refused"]):
    text: str


@attrs.frozen(slots=True)
class Redirect(Call["Accepted | Refused"]):
    text: str


@attrs.frozen(slots=True)
class Interrupt(Call["Accepted | Refused"]):
    reason: str = "interrupted by the user"


@attrs.frozen(slots=True)
class Cancel(Call["Cancelled | Refused"]):
    reason: str = "cancelled by the user"


@attrs.frozen(slots=True)
class RespondApproval(Call["None | Refused"]):
    request_id: int
    choice: ApprovalChoice
    content: dict[str, Any] | None = None
    """A form request's typed answer (an MCP elicitation)."""


@attrs.frozen(slots=True)
class SetYolo(Call["bool | Refused"]):
    """Skip (``on``) or apply the dangerous-command list; the hardline floor always holds."""

    on: bool


@attrs.frozen(slots=True)
class SetMcpServer(Call["tuple[str, ...] | Refused"]):
    """Offer (``on``) or stop offering MCP server ``server``'s tools in this session."""

    server: str
    on: bool


@attrs.frozen(slots=True)
class Compress(Call["Accepted | Refused"]):
    """Compact the transcript now (``/compress``), steering the summary toward ``focus``.

    Idle: a compaction job runs at once. Busy: the running turn compacts before
    its next model request.
    """

    focus: str | None = None


@attrs.frozen(slots=True)
class GetState(Call["SessionState | Refused"]):
    pass


@attrs.frozen(slots=True)
class GetHub(Call["EventHub"]):
    """Answered with the session's ``EventHub`` (in-process subscribers)."""


@attrs.frozen(slots=True)
class Close(Call["Cancelled | Refused"]):
    reason: str = "closed"


@attrs.frozen(slots=True)
class MachineInput:
    """Input pushed by a part of the daemon (a finished background delegation...).

    Travels the road of process notices: never interrupts, rolls back or gets
    refused; starts a turn when idle, else waits (or steers, in busy mode
    ``steer``). ``event`` is published as it arrives; ``on_delivered`` is awaited
    (bounded, failures logged) once the text was handed to a turn.
    """

    source: str
    text: str
    event: object | None = None
    on_delivered: Callable[[], Awaitable[None]] | None = attrs.field(default=None, eq=False)


@attrs.frozen(slots=True)
class ListSubagents(Call[Any]):
    """Answered with the session's subagents (running, queued and recently finished).

    Its reply types belong to ``hermes.subagents``, which this package does not import."""


@attrs.frozen(slots=True)
class SteerSubagent(Call["Accepted | Refused"]):
    """Steer one of this session's subagents by id."""

    subagent_id: str
    text: str


@attrs.frozen(slots=True)
class StopSubagent(Call[Any]):
    """Stop one of this session's subagents by id (its whole subtree is cancelled)."""

    subagent_id: str
    reason: str = "stopped by its owner"


@attrs.frozen(slots=True)
class Accepted:
    """A prompt or steer was taken: ``turn`` runs it, or it waits at ``queued``."""

    how: str
    """started, queued, steered, interrupting, rolled_back."""
    turn: int | None = None
    queued: int = 0


@attrs.frozen(slots=True)
class SessionState:
    id: str
    busy: bool
    turn: int
    """The running turn's number, or the last one's when idle (0 before any)."""
    turn_path: str | None
    queued: int
    messages: int
    """The transcript's length as the session holds it: while a turn runs, as it was
    when the turn started (the turn owns its copy and gives it back when it ends)."""
    usage: Usage
    busy_mode: str
    approvals_waiting: tuple[int, ...]
    closed: bool
    context_tokens: int = 0
    """Prompt tokens of the transcript the session holds (see ``messages``), anchored on
    the latest reply (estimated after a compaction)."""
    context_window: int = 0
    reviewing: bool = False
    """A background review is running (any new input cancels it)."""


@attrs.frozen(slots=True)
class Refused:
    error: Exception
