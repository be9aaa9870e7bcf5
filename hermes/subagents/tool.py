"""The ``delegate_task`` tool: hand one goal, or a batch, to subagents.

Kind ``OTHER`` (runs alone in its batch) and exempt from the batch deadline
(``NO_TIMEOUT``): an inline delegation waits for its children, which have
their own liveness checks and optional wall-clock cap. It ``holds_interrupt``:
while it runs its turn holds off soft interrupts, so a new prompt in
``interrupt`` busy mode is queued instead of cutting the children off. A background delegation
returns its id at once; its result arrives later as a new input. Where a call
runs is decided by ``placement.py`` (seed #252): at the default, code.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from hermes.session import TurnUsage
from hermes.tools import NO_TIMEOUT, Tool, ToolContext, ToolKind, ToolOutcome

from .errors import DelegationError
from .placement import POOL_FULL, inline_note, place
from .results import BatchResult, DelegationStarted, format_batch
from .service import SubagentService
from .tasks import parse_batch

_TASK = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "description": "What this subagent must do, in full."},
        "context": {"type": "string", "description": "What it needs to know from you."},
        "toolsets": {"type": "array", "items": {"type": "string"}},
        "output_schema": {"type": "object"},
    },
    "required": ["goal"],
}


class DelegateTaskTool(Tool):
    """``delegate_task``; see the module docstring."""

    name = "delegate_task"
    description = (
        "Delegate work to subagents: fresh sessions that run concurrently with their own "
        "tools and report back a summary.\n"
        "Give one goal (with context) or a batch of tasks. Each goal must be complete and "
        "self-contained (what to do, where, what to report): subagents do not see this "
        "conversation. Optional: toolsets (a subset of your tools), output_schema (a JSON "
        "schema the answer must fit).\n"
        "The daemon decides where it runs: normally a top-level session's delegation runs "
        "in the background (the call returns at once; the result comes later as a new "
        "message) and a subagent's inline (the call returns the results); the result "
        "says so when it ran inline anyway. background is honoured only where the "
        "operator lets the model choose."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "goal": {"type": "string", "description": "One task's goal (or use tasks)."},
            "context": {"type": "string", "description": "Context for the single goal."},
            "tasks": {"type": "array", "items": _TASK, "description": "A batch of tasks."},
            "toolsets": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Toolset or tool names to give every task (default: yours).",
            },
            "output_schema": {"type": "object", "description": "JSON schema of each answer."},
            "background": {
                "type": "boolean",
                "default": False,
                "description": "Return at once, result later (only where the model chooses).",
            },
        },
    }
    kind = ToolKind.OTHER
    toolset = "delegation"
    holds_interrupt = True
    spawns_subagents = True

    def call_timeout(self, args: Mapping[str, Any]) -> float | None:
        return NO_TIMEOUT

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        try:
            service = ctx.service(SubagentService)
        except LookupError:
            return ToolOutcome.error(
                "Delegation is not available in this session. Nothing was started; do the "
                "task yourself.",
                reason="unavailable",
            )
        try:
            service.preflight()  # pause, then depth: before the batch is even read
            tasks = parse_batch(args, max_batch=service.config.max_batch)
        except DelegationError as error:
            return ToolOutcome.error(str(error), reason=type(error).__name__)
        placement = place(
            service.config.background,
            depth=service.depth,
            attended=ctx.ask_approval is not None,
            asked=bool(args.get("background", False)),
        )
        delegation_id = f"dg-{secrets.token_hex(6)}"
        usage = ctx.services.get(TurnUsage)  # a value: the context's size at the batch
        used = usage.context_used if isinstance(usage, TurnUsage) else 0
        finished = False
        try:
            answer = await service.delegate(
                delegation_id,
                tasks,
                background=placement.background,
                context_used=used,
                inline_if_full=placement.inline_if_full,
            )
            finished = True
        except DelegationError as error:
            finished = True
            return ToolOutcome.error(str(error), reason=type(error).__name__)
        finally:
            if not finished and (not placement.background or placement.inline_if_full):
                service.abandon(delegation_id, "the delegating tool call was cancelled")
        if isinstance(answer, DelegationStarted):
            queued = f" ({answer.queued} waiting for a slot)" if answer.queued else ""
            return ToolOutcome.ok(
                f"Started background delegation {answer.delegation_id} with "
                f"{len(answer.subagent_ids)} subagent(s): {', '.join(answer.subagent_ids)}"
                f"{queued}. Its result will arrive as a new message when every task has "
                "ended; carry on meanwhile.",
                delegation_id=answer.delegation_id,
                background=True,
            )
        assert isinstance(answer, BatchResult)
        failed = all(r.status.value != "completed" for r in answer.results)
        why = POOL_FULL if placement.background else placement.note
        return ToolOutcome(
            (inline_note(why) if why else "") + format_batch(answer),
            is_error=failed,
            details={
                "delegation_id": answer.delegation_id,
                "statuses": list(answer.statuses),
                "subagents": [r.subagent_id for r in answer.results],
            },
        )
