"""Tool workers: each tool call of a turn runs in its own one-shot task (``actors.Task``).

A worker shows up in the tree under its turn (``.../turn-3/tool-toolu_01``),
beats while it runs, and can be killed by path on its own: the call then
gets a *stopped* error result and the turn goes on. When the turn's call
deadline passes or the turn is cancelled, the worker is killed, which
cancels the tool (a terminal command's process group is killed and reaped).
The call's outcome is the task's result. A worker is a ``TaskChild`` of its
turn (temporary, brutal, unlinked): a crash or a kill is the call's error
result, never the turn's end.
"""

from __future__ import annotations

import re

from actors import ActorContext, ExitReason, MailboxConfig, Overflow, Task
from hermes.tools import Invoker, PreparedCall, ToolContext, ToolOutcome, ToolRegistry

from .task_child import TaskChild

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class ToolWorker(Task[ToolOutcome]):
    """Runs exactly one tool call; its result is the call's outcome."""

    mailbox = MailboxConfig(capacity=1, overflow=Overflow.FAIL)

    def __init__(self, registry: ToolRegistry, prepared: PreparedCall, ctx: ToolContext) -> None:
        self.registry = registry
        self.prepared = prepared
        self.tool_ctx = ctx

    async def run(self) -> ToolOutcome:
        self.ctx.beat(f"running {self.prepared.call.name}")
        return await self.registry.invoke(self.prepared, self.tool_ctx)


def worker_name(call_id: str) -> str:
    """A path segment for the worker of ``call_id``."""
    return "tool-" + (_UNSAFE.sub("_", call_id)[:64] or "call")


def worker_invoker(spawner: ActorContext, registry: ToolRegistry) -> Invoker:
    """An ``Invoker`` that runs each call in a ``ToolWorker`` child of ``spawner``."""

    async def invoke(prepared: PreparedCall, ctx: ToolContext) -> ToolOutcome:
        call = prepared.call
        worker = ToolWorker(registry, prepared, ctx)
        task = await TaskChild.start(spawner, worker, name=worker_name(call.id))
        try:
            outcome = await task.outcome()
        finally:
            if task.ref.is_alive:  # cut short (deadline, cancel): stop the tool now
                await task.stop()
        if isinstance(outcome, ExitReason):
            return ToolOutcome.error(
                f"[Tool call stopped: {call.name} was stopped while running "
                f"({outcome.describe()}). It may have partly completed; any process it "
                "started was killed.]",
                reason="worker_stopped",
            )
        return outcome

    return invoke
