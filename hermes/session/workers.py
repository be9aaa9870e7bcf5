"""Tool workers: each tool call of a turn runs in its own short-lived actor.

A worker shows up in the tree under its turn (``.../turn-3/tool-toolu_01``),
beats while it runs, and can be killed by path on its own: the call then
gets a *stopped* error result and the turn goes on. When the turn's call
deadline passes or the turn is cancelled, the worker is killed, which
cancels the tool (a terminal command's process group is killed and reaped).
"""

from __future__ import annotations

import math
import re

import attrs
import trio

from actors import Actor, ActorContext, ActorExited, Call, MailboxConfig, Overflow
from hermes.tools import Invoker, PreparedCall, ToolContext, ToolOutcome, ToolRegistry

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


@attrs.frozen(slots=True)
class RunCall(Call[ToolOutcome]):
    prepared: PreparedCall
    ctx: ToolContext


class ToolWorker(Actor):
    """Runs exactly one tool call and replies with its outcome."""

    mailbox = MailboxConfig(capacity=1, overflow=Overflow.FAIL)

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    async def receive(self, message: object) -> ToolOutcome:
        if not isinstance(message, RunCall):
            raise TypeError(f"a tool worker runs RunCall messages, not {type(message).__name__}")
        self.ctx.beat(f"running {message.prepared.call.name}")
        try:
            return await self.registry.invoke(message.prepared, message.ctx)
        finally:
            self.ctx.stop()  # one call per worker: exit as soon as the reply is out


def worker_name(call_id: str) -> str:
    """A path segment for the worker of ``call_id``."""
    return "tool-" + (_UNSAFE.sub("_", call_id)[:64] or "call")


def worker_invoker(spawner: ActorContext, registry: ToolRegistry) -> Invoker:
    """An ``Invoker`` that runs each call in a ``ToolWorker`` child of ``spawner``."""

    async def invoke(prepared: PreparedCall, ctx: ToolContext) -> ToolOutcome:
        call = prepared.call
        ref = await spawner.spawn(ToolWorker(registry), name=worker_name(call.id))
        answered = False
        try:
            outcome = await ref.call(RunCall(prepared, ctx), timeout=math.inf)
            answered = True  # the worker stops by itself after replying
            return outcome
        except ActorExited as exc:
            return ToolOutcome.error(
                f"[Tool call stopped: {call.name} was stopped while running "
                f"({exc.reason.describe()}). It may have partly completed; any process it "
                "started was killed.]",
                reason="worker_stopped",
            )
        finally:
            if not answered and ref.is_alive:  # cut short (deadline, cancel): stop the tool now
                with trio.CancelScope(shield=True):
                    await ref.kill()

    return invoke
