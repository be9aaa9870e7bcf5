"""Sessions: the turn loop, its control verbs, and always-valid history.

| module | one job |
|---|---|
| ``config.py`` | ``SessionConfig`` and ``BusyMode`` |
| ``crossed.py`` | ``CrossedReply``: what a reply cut by a redirect or interrupt leaves |
| ``session.py`` | ``SessionActor``: owns the conversation, takes prompts and verbs |
| ``turn.py`` | ``TurnActor``: one turn's loop, a one-shot task (model calls, steers) |
| ``batch.py`` | ``TurnBatches``: a turn's tool batches, their results stored as they land |
| ``outcome.py`` | ``TurnEnd`` and ``TurnResult``: how a turn ended |
| ``workers.py`` | ``ToolWorker``: one one-shot task per tool call |
| ``control.py`` | ``TurnHandle`` / ``TurnInbox``: steers, redirects, the soft interrupt, sent |
| ``inputs.py`` | ``InputQueue``: prompts and machine input waiting for the next turn |
| ``conversation.py`` | ``Conversation``: the transcript in memory and in the store, in step |
| ``events.py`` | typed session events and their bounded fan-out |
| ``approvals.py`` | approval requests from tools to attached surfaces |
| ``children.py`` | ``ChildHost``: the hook that hosts subagents (``hermes.subagents``) |
| ``handle.py`` | ``SessionHandle`` and ``start_session`` |
| ``messages.py`` / ``errors.py`` | the mailbox's messages; refusals |
| ``prompt.py`` / ``guards.py`` | the three-tier system prompt; loop guardrails |
"""

from .children import ChildHost, ChildOwner, HostedChildren
from .config import BusyMode, SessionConfig
from .control import TurnUsage
from .conversation import Conversation, open_tool_uses
from .crossed import CrossedReply
from .deps import SessionDeps
from .errors import (
    InvalidInput,
    NoTurnRunning,
    QueueFull,
    SessionBusy,
    SessionClosed,
    SessionError,
    UnknownApproval,
)
from .events import EventHub, SessionEvent, Subscriber
from .guards import RepeatCheck, RepeatGuard, UnknownToolStreak, Verdict
from .handle import SessionHandle, start_session
from .messages import (
    Accepted,
    Cancel,
    Close,
    Compress,
    Interrupt,
    ListSubagents,
    MachineInput,
    Prompt,
    Refused,
    SessionState,
    Steer,
    SteerSubagent,
    StopSubagent,
)
from .outcome import TurnEnd, TurnResult
from .prompt import PromptParts, build_system_prompt, find_context_file
from .session import Cancelled, SessionActor
from .tree import PROCESSES_PATH
from .turn import TurnActor
from .workers import ToolWorker

__all__ = [
    "PROCESSES_PATH",
    "Accepted",
    "BusyMode",
    "Cancel",
    "Cancelled",
    "ChildHost",
    "ChildOwner",
    "Close",
    "Compress",
    "Conversation",
    "CrossedReply",
    "EventHub",
    "HostedChildren",
    "Interrupt",
    "InvalidInput",
    "ListSubagents",
    "MachineInput",
    "NoTurnRunning",
    "Prompt",
    "PromptParts",
    "QueueFull",
    "Refused",
    "RepeatCheck",
    "RepeatGuard",
    "SessionActor",
    "SessionBusy",
    "SessionClosed",
    "SessionConfig",
    "SessionDeps",
    "SessionError",
    "SessionEvent",
    "SessionHandle",
    "SessionState",
    "Steer",
    "SteerSubagent",
    "StopSubagent",
    "Subscriber",
    "ToolWorker",
    "TurnActor",
    "TurnEnd",
    "TurnResult",
    "TurnUsage",
    "UnknownApproval",
    "UnknownToolStreak",
    "Verdict",
    "build_system_prompt",
    "find_context_file",
    "open_tool_uses",
    "start_session",
]
