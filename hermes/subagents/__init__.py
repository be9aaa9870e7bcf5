"""Subagents: ``delegate_task`` runs goals in supervised child sessions.

    session-<id>
    `-- subagents (SubagentSupervisor)       admission, liveness, results
        `-- sa-1-1a2b3c4d (SessionActor)     the child session, depth + 1, driven by
                                             a task of the supervisor (ChildDriver)

| module | one job |
|---|---|
| ``config.py`` | ``SubagentConfig``: every limit and default |
| ``tasks.py`` | ``TaskSpec`` and the batch checks (placeholder goals refused) |
| ``gate.py`` | ``SpawnGate``: daemon-wide cap, per-parent slots, the admission queue, pause |
| ``child.py`` | a child's tools, settings and focused system prompt |
| ``progress.py`` | ``Progress``: a child's iteration, tool and activity, from its events |
| ``driver.py`` | ``ChildDriver``: a supervisor task per child that starts and drives it |
| ``supervisor.py`` | ``SubagentSupervisor``: one per delegating session |
| ``ledger.py`` | the supervisor's batch and child records; the result and list line of one |
| ``output.py`` | output schemas: extract, validate, the retry prompt |
| ``results.py`` | ``TaskStatus``, ``TaskResult``, summary budget, the text the parent reads |
| ``service.py`` | ``SubagentService``: what the tool gets from its context |
| ``placement.py`` | inline or background: code (seed #252) or the model decides |
| ``tool.py`` | the ``delegate_task`` tool |
| ``runtime.py`` | ``SubagentRuntime`` (daemon-wide state, operator verbs), ``SubagentHost`` |
| ``events.py`` / ``messages.py`` / ``errors.py`` | events; mailbox messages; refusals |

See ``docs/subagents.md``.
"""

from .config import BLOCKED_TOOLS, MAX_DEPTH_LIMIT, SubagentConfig
from .errors import (
    AtCapacity,
    DelegationError,
    DepthLimit,
    InvalidBatch,
    SpawningPaused,
    UnknownSubagent,
)
from .events import (
    DelegationCompleted,
    SubagentFinished,
    SubagentProgress,
    SubagentQueued,
    SubagentStarted,
)
from .gate import ParentSlots, SpawnGate, Ticket
from .messages import SubagentInfo
from .output import OutputCheck, check_output, extract_json
from .progress import Progress
from .results import BatchResult, DelegationStarted, TaskResult, TaskStatus, summary_cap
from .runtime import SubagentHost, SubagentRuntime, with_delegation
from .service import SubagentService
from .supervisor import SubagentSupervisor
from .tasks import TaskSpec, parse_batch, placeholder_problem
from .tool import DelegateTaskTool

__all__ = [
    "BLOCKED_TOOLS",
    "MAX_DEPTH_LIMIT",
    "AtCapacity",
    "BatchResult",
    "DelegateTaskTool",
    "DelegationCompleted",
    "DelegationError",
    "DelegationStarted",
    "DepthLimit",
    "InvalidBatch",
    "OutputCheck",
    "ParentSlots",
    "Progress",
    "SpawnGate",
    "SpawningPaused",
    "SubagentConfig",
    "SubagentFinished",
    "SubagentHost",
    "SubagentInfo",
    "SubagentProgress",
    "SubagentQueued",
    "SubagentRuntime",
    "SubagentService",
    "SubagentStarted",
    "SubagentSupervisor",
    "TaskResult",
    "TaskSpec",
    "TaskStatus",
    "Ticket",
    "UnknownSubagent",
    "check_output",
    "extract_json",
    "parse_batch",
    "placeholder_problem",
    "summary_cap",
    "with_delegation",
]
