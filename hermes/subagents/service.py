"""``SubagentService``: what the ``delegate_task`` tool gets from its context.

A typed client of one session's ``SubagentSupervisor``. ``preflight`` runs
the spawn checks that come before the batch is read (operator pause, depth);
``delegate`` starts a batch and, inline, waits for all of it without a
timeout (the children have their own liveness checks and clocks);
``abandon`` tells the supervisor that the inline caller went away.
"""

from __future__ import annotations

import contextlib
import math

from actors import ActorExited, ActorRef, CallTimeout, MailboxFull
from hermes.session import Refused

from .config import SubagentConfig
from .errors import DelegationError, DepthLimit
from .gate import SpawnGate
from .messages import Abandon, Delegate
from .results import BatchResult, DelegationStarted
from .tasks import TaskSpec

START_TIMEOUT = 30.0
"""Bound on a background delegation's answer (it returns once its tasks are admitted)."""


def spawn_checks(gate: SpawnGate, config: SubagentConfig, depth: int) -> None:
    """The checks before a batch is read, in order: operator pause, then the depth limit."""
    gate.check_open()
    if depth >= config.max_depth:
        raise DepthLimit(
            f"This session is at depth {depth} of at most {config.max_depth}: it may not "
            "delegate. Do the task yourself."
        )


class SubagentService:
    """One session's subagents, as its tools use them."""

    def __init__(
        self, supervisor: ActorRef, config: SubagentConfig, gate: SpawnGate, depth: int
    ) -> None:
        self.supervisor = supervisor
        self.config = config
        self.gate = gate
        self.depth = depth

    def preflight(self) -> None:
        """Refuse before reading the batch: spawning paused, then the depth limit."""
        spawn_checks(self.gate, self.config, self.depth)

    async def delegate(
        self,
        delegation_id: str,
        tasks: list[TaskSpec],
        *,
        background: bool = False,
        context_used: int = 0,
        inline_if_full: bool = False,
    ) -> BatchResult | DelegationStarted:
        """Start a batch; inline, wait until every task has ended (no timeout).

        ``context_used``: tokens of the delegating session's context; ``inline_if_full``:
        a background batch may run inline instead (see ``Delegate``).
        """
        timeout = START_TIMEOUT if background and not inline_if_full else math.inf
        request = Delegate(delegation_id, tuple(tasks), background, context_used, inline_if_full)
        try:
            answer = await self.supervisor.call(request, timeout=timeout)
        except ActorExited as error:
            raise DelegationError(
                f"The subagent supervisor stopped ({error.reason.describe()}); the delegation "
                "did not finish."
            ) from error
        except (CallTimeout, MailboxFull) as error:
            raise DelegationError(f"The subagent supervisor did not answer: {error}") from error
        if isinstance(answer, Refused):
            raise answer.error
        return answer

    def abandon(self, delegation_id: str, reason: str) -> None:
        """The inline caller went away: stop the batch (never blocks)."""
        # A flooded supervisor (MailboxFull): the owner's cancel stops everything anyway.
        with contextlib.suppress(MailboxFull):
            self.supervisor.cast_nowait(Abandon(delegation_id, reason))
