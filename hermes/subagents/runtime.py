"""``SubagentRuntime``: delegation's daemon-wide state, and the host sessions plug in.

One per daemon: the ``SubagentConfig``, the ``SpawnGate`` (daemon-wide cap,
admission queue, the operator's pause switch) and an index of running
subagent ids to their supervisors, for the operator's verbs. ``host(depth)``
gives the ``ChildHost`` a session's ``SessionDeps.subagents`` holds::

    runtime = SubagentRuntime(SubagentConfig())
    registry = with_delegation(default_registry())
    deps = SessionDeps(store=store, client=client, registry=registry, subagents=runtime.host())
"""

from __future__ import annotations

from pathlib import Path

import attrs

from actors import ActorContext, ActorExited, ActorRef, CallTimeout
from hermes.session import ChildOwner, HostedChildren, Refused, StopSubagent
from hermes.tools import ToolRegistry

from .config import SubagentConfig
from .errors import UnknownSubagent
from .gate import ESTOP_STOPPED, SpawnGate
from .messages import StopBackground
from .results import TaskResult
from .service import SubagentService
from .supervisor import SubagentSupervisor
from .tool import DelegateTaskTool

OPERATOR_TIMEOUT = 30.0


@attrs.frozen(slots=True)
class SubagentHost:
    """The ``ChildHost`` of sessions at ``depth`` (0: top level)."""

    runtime: SubagentRuntime
    depth: int = 0

    async def start(self, ctx: ActorContext, owner: ChildOwner) -> HostedChildren | None:
        if self.depth >= self.runtime.config.max_depth:
            return None  # below the depth limit a session has no children to host
        supervisor = SubagentSupervisor(self.runtime, owner, self.depth)
        ref = await ctx.spawn(supervisor, name="subagents")
        service = SubagentService(ref, self.runtime.config, self.runtime.gate, self.depth)
        return HostedChildren(ref, {SubagentService: service}, idle=supervisor.activity.idle)


class SubagentRuntime:
    """Daemon-wide delegation state; see the module docstring."""

    def __init__(self, config: SubagentConfig | None = None, estop: Path | None = None) -> None:
        self.config = config or SubagentConfig()
        c = self.config
        self.gate = SpawnGate(c.max_total_children, c.queue_capacity, c.admission)
        self.gate.estop = estop
        self._owners: dict[str, ActorRef] = {}

    def host(self, depth: int = 0) -> SubagentHost:
        return SubagentHost(self, depth)

    # -- the operator ------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self.gate.paused

    def pause(self) -> None:
        """Refuse new delegations everywhere (running children go on)."""
        self.gate.paused = True

    def resume(self) -> None:
        self.gate.paused = False

    @property
    def stopped(self) -> bool:
        """The emergency stop is on (its file exists): nothing starts, results wait."""
        return self.gate.stopped()

    async def emergency_stop(self, reason: str = ESTOP_STOPPED) -> int:
        """Stop every background delegation in the daemon; the number of tasks stopped.

        Each owner's supervisor ends its background batches' tasks (``interrupted``,
        ``reason``); their result is recorded and reaches the owner's model once the
        stop is cleared (``Deliveries`` holds it meanwhile). Called once the stop's file
        exists, so nothing new starts behind it.
        """
        stopped = 0
        for supervisor in set(self._owners.values()):
            try:
                stopped += await supervisor.call(StopBackground(reason), timeout=OPERATOR_TIMEOUT)
            except (ActorExited, CallTimeout):
                continue  # gone with its owner (a stopped parent's subtree): nothing to stop
        return stopped

    def remember(self, subagent_id: str, supervisor: ActorRef) -> None:
        self._owners[subagent_id] = supervisor

    def forget(self, subagent_id: str) -> None:
        self._owners.pop(subagent_id, None)

    @property
    def running_ids(self) -> tuple[str, ...]:
        """Subagents queued or running anywhere in the daemon."""
        return tuple(self._owners)

    async def stop_subagent(
        self, subagent_id: str, reason: str = "stopped by an operator"
    ) -> TaskResult:
        """An operator stops any subagent by id (its owner gets the result as usual)."""
        supervisor = self._owners.get(subagent_id)
        if supervisor is None:
            raise UnknownSubagent(f"no subagent {subagent_id!r} is queued or running")
        try:
            answer = await supervisor.call(
                StopSubagent(subagent_id, reason), timeout=OPERATOR_TIMEOUT
            )
        except (ActorExited, CallTimeout) as error:
            raise UnknownSubagent(
                f"subagent {subagent_id!r} could not be stopped: {error}"
            ) from error
        if isinstance(answer, Refused):
            raise answer.error
        assert isinstance(answer, TaskResult)
        return answer


def with_delegation(registry: ToolRegistry) -> ToolRegistry:
    """``registry`` plus the ``delegate_task`` tool (a new registry)."""
    out = ToolRegistry(registry)
    out.register(DelegateTaskTool(), replace=True)
    return out
