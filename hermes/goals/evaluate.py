"""The work after a goal turn, as a one-shot task: draft, gates, then the judge.

The session's ``GoalKeeper`` spawns one ``Evaluation`` task at a time (an
unlinked child of the session, killed by a new evaluation or a clear): the
session's mailbox stays free while gates and the judge run. Its value says
what happened; the keeper decides what it means for the goal or the loop.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import trio

from actors import MailboxConfig, Overflow, Task

from .barrier import background
from .gates import GateCheck, check_gates
from .judge import Judged, draft_contract, judge_goal
from .record import Contract, Goal

if TYPE_CHECKING:
    from hermes.model.client import ModelClient
    from hermes.processes import ProcessService

LIST_TIMEOUT = 5.0
"""Seconds the evaluation waits for the session's process list (else the judge sees none)."""


@attrs.frozen(slots=True, kw_only=True)
class Job:
    """What to evaluate."""

    kind: str
    """``draft`` (a contract for ``goal.text``), ``goal`` (gates, then the judge) or
    ``until`` (the judge, with the loop's stop condition as the goal)."""
    goal: Goal
    reply: str = ""
    turn: int = 0


@attrs.frozen(slots=True, kw_only=True)
class Outcome:
    job: Job
    gates: GateCheck = attrs.field(factory=GateCheck)
    judged: Judged | None = None
    """None when a gate failed or refused (the judge was skipped), or for a draft."""
    contract: Contract | None = None


class Evaluation(Task[Outcome]):
    mailbox = MailboxConfig(capacity=4, overflow=Overflow.FAIL)
    shutdown_budget = 0.0

    def __init__(
        self,
        job: Job,
        *,
        client: ModelClient,
        model: str,
        timeout: float,
        cwd: Path,
        env: Mapping[str, str],
        processes: ProcessService | None = None,
    ) -> None:
        self.job = job
        self.processes = processes
        self.client = client
        self.model = model
        self.timeout = timeout
        self.cwd = cwd
        self.env = env

    async def run(self) -> Outcome:
        job = self.job
        if job.kind == "draft":
            contract = await draft_contract(self.client, self.model, job.goal.text, self.timeout)
            return Outcome(job=job, contract=contract)
        if job.kind == "goal":
            gates = await check_gates(job.goal.gates, self.cwd, self.env)
            if gates.refusal is not None or gates.failed is not None:
                return Outcome(job=job, gates=gates)
        else:
            gates = GateCheck()
        running = await self._background() if job.kind == "goal" else ""
        judged = await judge_goal(
            self.client, self.model, job.goal, job.reply, self.timeout, running
        )
        return Outcome(job=job, gates=gates, judged=judged)

    async def _background(self) -> str:
        """The session's running processes, as the judge is shown them ('' for none)."""
        if self.processes is None:
            return ""
        from hermes.processes import ProcessError

        with trio.move_on_after(LIST_TIMEOUT):
            try:
                return background(await self.processes.list(), time.time())
            except ProcessError:
                return ""
        return ""
