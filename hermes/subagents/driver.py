"""``ChildDriver``: one child session, started and driven by a one-shot task.

    subagents (SubagentSupervisor)        admission, liveness, results
    `-- sup (DynamicSupervisor)           one temporary child spec per task
        |-- sa-1-1a2b3c4d (ChildDriver)   this module: a ``Task[RunOutcome]``
        |   `-- session (SessionActor)    the child session: its processes, turns...
        `-- sa-2-5e6f7a8b ...

The supervisor starts each task's driver through its ``DynamicSupervisor``
(``task_spec``: temporary, so a driver that ends is never restarted). The
body creates the child's row in the store (with the parent link), spawns the
``SessionActor`` as the driver's own child with an ``EventHub`` whose
observer is the task's ``Progress``, tells the supervisor the session is up
(``SessionUp``, a call: its answer is a stop asked for meanwhile, if any),
sends the first prompt and waits for the turn's result. With an output
schema the answer is checked, and a bad one gets a follow-up with the
errors. Then it closes the child (its processes are killed and reaped, the
session is marked ended) and returns the ``RunOutcome``.

Nobody awaits a supervised task's value, so the driver sends it to the
supervisor as ``ChildEnded`` on every path: after a return; after a failure
of its own code (then it raises: the task crashes and its session is killed
with it); and, best-effort, when it is cancelled (the supervisor's monitor
of the driver is the backstop). Killing a driver kills its subtree: that is
how the supervisor stops a child.
"""

from __future__ import annotations

import contextlib
import logging
import math

import attrs
import trio

from actors import ActorExited, ActorRef, CallTimeout, MailboxFull, StartFailed, Task
from hermes.model.types import Usage
from hermes.session import (
    Close,
    EventHub,
    Prompt,
    Refused,
    SessionActor,
    SessionConfig,
    SessionDeps,
    TurnEnd,
    TurnResult,
)
from hermes.store import StoreError

from .messages import ChildEnded, SessionUp
from .outcome import RunOutcome
from .output import check_output, retry_prompt
from .progress import Progress
from .tasks import TaskSpec

log = logging.getLogger(__name__)

SUPERVISOR_TIMEOUT = 30.0
"""Bound on the supervisor's answer to ``SessionUp``."""

SESSION_NAME = "session"
"""The child session's name under its driver."""

__all__ = ["SESSION_NAME", "ChildDriver", "ChildPlan", "RunOutcome"]


@attrs.frozen(slots=True, kw_only=True)
class ChildPlan:
    """Everything a driver needs, prepared by the supervisor (``child.child_plan``)."""

    subagent_id: str
    parent_session_id: str
    supervisor: ActorRef
    """Where ``SessionUp`` and ``ChildEnded`` go."""
    task: TaskSpec
    config: SessionConfig
    deps: SessionDeps
    progress: Progress
    """Updated by the child's hub observer; the supervisor reads it for liveness and listing."""
    prompt: str
    schema_retries: int
    close_timeout: float


@attrs.define(slots=True)
class _Run:
    """The driver's own record of the work so far (never leaves the driver)."""

    end: TurnEnd | None = None
    text: str = ""
    detail: str = ""
    usage: Usage = attrs.field(factory=Usage)
    iterations: int = 0
    output: object = None
    output_error: str | None = None

    def outcome(self) -> RunOutcome:
        return RunOutcome(
            self.end,
            text=self.text,
            detail=self.detail,
            usage=self.usage,
            iterations=self.iterations,
            output=self.output,
            output_error=self.output_error,
        )


class ChildDriver(Task[RunOutcome]):
    """Starts and drives one child session; see the module docstring."""

    trap_exits = True
    """The child session's crash is a failed call of this body, not this task's death."""

    def __init__(self, plan: ChildPlan) -> None:
        self.plan = plan
        self._closed = False

    async def run(self) -> RunOutcome:
        """The whole task; its value is also sent to the supervisor (``ChildEnded``)."""
        try:
            outcome = await self._work()
        except Exception as error:
            log.exception("subagent %s: its driver failed", self.plan.subagent_id)
            detail = f"its driver failed: {type(error).__name__}: {error}"
            await self._report(RunOutcome(None, detail=detail))
            raise
        except BaseException:  # cancelled: killed or stopped
            self._report_nowait(RunOutcome(TurnEnd.CANCELLED, detail="its driver was stopped"))
            raise
        await self._report(outcome)
        return outcome

    async def _report(self, outcome: RunOutcome) -> None:
        # Waits for room in a full mailbox; False (the supervisor is gone) needs nothing.
        ended = ChildEnded(self.plan.subagent_id, outcome, closed=self._closed)
        await self.plan.supervisor.cast(ended)

    def _report_nowait(self, outcome: RunOutcome) -> None:
        # No await while cancelled; a full mailbox leaves it to the supervisor's monitor.
        ended = ChildEnded(self.plan.subagent_id, outcome, closed=False)
        with contextlib.suppress(MailboxFull):
            self.plan.supervisor.cast_nowait(ended)

    async def _work(self) -> RunOutcome:
        plan = self.plan
        progress = plan.progress
        progress.touch("creating the child session")
        try:
            info = await plan.deps.store.create_session(
                model=plan.config.model, title=plan.config.title, parent_id=plan.parent_session_id
            )
        except StoreError as error:
            return RunOutcome(None, detail=f"the child session was not created: {error}")
        progress.session_id = info.id
        hub = EventHub(info.id)
        hub.observe(progress.observe)
        actor = SessionActor(plan.config, plan.deps, info.id, hub)
        try:
            # Brutal on a stop, as its driver is: a child is never left half-stopped.
            session = await self.ctx.spawn(actor, name=SESSION_NAME, shutdown=0)
        except StartFailed as error:
            return RunOutcome(
                None, detail=f"the child session did not start: {error.reason.describe()}"
            )
        run = _Run()
        stop = await self._session_up(session)
        if stop is not None:
            run.end, run.detail = TurnEnd.INTERRUPTED, stop
        else:
            await self._drive(session, run)
        await self._close(session)
        return run.outcome()

    async def _session_up(self, session: ActorRef) -> str | None:
        """Tell the supervisor; its answer: go on (None) or the reason of a stop."""
        up = SessionUp(self.plan.subagent_id, session)
        try:
            return await self.plan.supervisor.call(up, timeout=SUPERVISOR_TIMEOUT)
        except ActorExited:
            return "the subagent supervisor stopped"
        except CallTimeout:
            return f"the subagent supervisor did not answer in {SUPERVISOR_TIMEOUT:g}s"

    async def _turn(self, session: ActorRef, text: str, outcome: _Run) -> TurnResult | None:
        try:
            answer = await session.call(Prompt(text, wait=True), timeout=math.inf)
        except ActorExited as error:
            outcome.end = TurnEnd.FAILED
            outcome.detail = f"the child session died: {error.reason.describe()}"
            return None
        if isinstance(answer, Refused):
            outcome.end = TurnEnd.FAILED
            outcome.detail = f"the child refused its prompt: {answer.error}"
            return None
        assert isinstance(answer, TurnResult)
        outcome.end = answer.reason
        outcome.text = answer.text
        outcome.detail = answer.detail
        outcome.usage = outcome.usage + answer.usage
        outcome.iterations += answer.iterations
        return answer

    async def _drive(self, session: ActorRef, outcome: _Run) -> None:
        plan = self.plan
        result = await self._turn(session, plan.prompt, outcome)
        schema = plan.task.output_schema
        if result is None or schema is None or result.reason is not TurnEnd.COMPLETED:
            return
        for attempt in range(plan.schema_retries + 1):
            check = check_output(outcome.text, schema)
            if check.ok:
                outcome.output = check.value
                outcome.output_error = None
                return
            outcome.output_error = check.error
            if attempt == plan.schema_retries:
                return
            assert check.error is not None
            result = await self._turn(session, retry_prompt(check.error, schema), outcome)
            if result is None or result.reason is not TurnEnd.COMPLETED:
                return

    async def _close(self, session: ActorRef) -> None:
        """Close the child (processes killed and reaped, the session marked ended) and
        give it ``close_timeout`` to exit; the task's end kills it if it has not."""
        self.plan.progress.touch("closing")
        limit = self.plan.close_timeout
        # ActorExited: already gone, and stopping it stops nothing more.
        with trio.move_on_after(limit), contextlib.suppress(ActorExited):
            await session.call(Close("subagent finished"), timeout=limit)
            self._closed = True  # its row is marked ended
            await session.wait_exited()
