"""The tool layer: registry, batches, built-in tools and the approval gate.

| module | one job |
|---|---|
| ``base.py`` | ``Tool`` (the base class), ``ToolKind``, ``ToolOutcome``, ``ToolCall`` |
| ``context.py`` | ``ToolContext``: cwd, scrubbed env, approvals, progress, services |
| ``env.py`` | removing the daemon's secrets from children's environment |
| ``schema.py`` | argument validation and coercion against a JSON schema |
| ``registry.py`` | ``ToolRegistry``: register, specs, resolve, invoke, watch; ``ToolSnapshot`` |
| ``plan.py`` | ``plan_batch``: dedupe and cut a batch into concurrent stages |
| ``batch.py`` | ``run_batch``: deadlines, output budgets, interrupt, cancellation |
| ``results.py`` | ``ToolResult``, ``CallStatus``, ``BatchCollector`` |
| ``budget.py`` | spilling large results to files with a preview |
| ``shell.py`` | reading shell command lines with the bash grammar (tree-sitter-bash) |
| ``shell_words.py`` | one shell word's parts; what ``echo``/``printf`` of literals prints |
| ``wrappers.py`` | the command under ``sudo``/``env``/``timeout``...; GNU-style options |
| ``danger.py`` | ``classify``: the walk of a command line for the gate |
| ``danger_scope.py`` | what a line's variables may hold, which files it writes |
| ``danger_commands.py`` | the rules for one command's plain words (rm, dd, git, find...) |
| ``danger_rules.py`` | the gate's tables: the hardline floor, the dangerous list |
| ``detach.py`` | foreground commands that would detach (nohup, trailing ``&``, dev servers) |
| ``approval.py`` | the approval decision |
| ``guard/`` | the path policy of every tool that touches files; per-session read state |
| ``smart.py`` | smart approvals: approval modes, the model judge |
| ``sudo.py`` | ``sudo -S`` without a configured password, refused |
| ``checkpoint/`` | snapshots of working directories in shadow git repositories |
| ``builtin/`` | terminal, read_file, write_file, patch, search_files; ``process`` |

Running a command in its own process group and killing the group is
``hermes/procgroup.py`` (below every package: the background-process watchers
of ``hermes.processes`` use it too).
"""

from .approval import (
    AllowlistSaver,
    ApprovalCallback,
    ApprovalChoice,
    ApprovalDecision,
    ApprovalRequest,
    ApprovalSession,
    Unattended,
    Verdict,
    decide,
)
from .base import (
    NO_TIMEOUT,
    MalformedArguments,
    Tool,
    ToolCall,
    ToolKind,
    ToolOutcome,
    ToolProgress,
)
from .batch import BatchPolicy, Invoker, run_batch
from .budget import OutputBudget
from .builtin import builtin_tools, default_registry
from .checkpoint import CheckpointService
from .context import ProgressCallback, ToolContext
from .danger import DANGEROUS_RULES, HARDLINE_RULES, Finding, classify, is_hardline
from .detach import Detach, detaches
from .env import NEVER_PASSED, is_secret_name, scrub_env
from .plan import BatchPlan, plan_batch
from .registry import PreparedCall, ToolRegistry, ToolSnapshot
from .results import BatchCollector, CallStatus, ToolResult
from .schema import ArgumentError, validate
from .smart import ApprovalMode, JudgeChoice, Judgement, ModelJudge

__all__ = [
    "DANGEROUS_RULES",
    "HARDLINE_RULES",
    "NEVER_PASSED",
    "NO_TIMEOUT",
    "AllowlistSaver",
    "ApprovalCallback",
    "ApprovalChoice",
    "ApprovalDecision",
    "ApprovalMode",
    "ApprovalRequest",
    "ApprovalSession",
    "ArgumentError",
    "BatchCollector",
    "BatchPlan",
    "BatchPolicy",
    "CallStatus",
    "CheckpointService",
    "Detach",
    "Finding",
    "Invoker",
    "JudgeChoice",
    "Judgement",
    "MalformedArguments",
    "ModelJudge",
    "OutputBudget",
    "PreparedCall",
    "ProgressCallback",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolKind",
    "ToolOutcome",
    "ToolProgress",
    "ToolRegistry",
    "ToolResult",
    "ToolSnapshot",
    "Unattended",
    "Verdict",
    "builtin_tools",
    "classify",
    "decide",
    "default_registry",
    "detaches",
    "is_hardline",
    "is_secret_name",
    "plan_batch",
    "run_batch",
    "scrub_env",
    "validate",
]
