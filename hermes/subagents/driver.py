"""``ChildDriver``: starts one child session and drives it, as a task of the supervisor.

    subagents (SubagentSupervisor)
    |-- sa-1-1a2b3c4d (SessionActor)      the child session: its own
    |   |-- processes                     process registry,
    |   |-- subagents                     children (only an orchestrator),
    |   `-- turn-1                        and turns
    `-- sa-2-5e6f7a8b ...

For each task the supervisor starts ``ChildDriver.run`` as an owned task
(``ctx.start_task(..., notify=True)``). The driver creates the child's row in
the store (with the parent link), spawns the ``SessionActor`` as a child of
the supervisor with an ``EventHub`` whose observer is the task's
``Progress``, sends the first prompt and waits for the turn's result. With an
output schema the answer is checked, and a bad one gets one follow-up with
the errors. Then it closes the child (its processes are killed and reaped,
the session is marked ended) and returns; the supervisor reads ``outcome``
when the task's ``TaskEnded`` arrives. To stop a child the supervisor cancels
its driver and kills its session, whose subtree goes with it.

The driver was an actor of its own (``SubagentRunner``) between the
supervisor and the child session: one more cell, mailbox and teardown per
child, ~4 ms of the subagent benchmark's 100-child hard cancel.
"""

from __future__ import annotations

import contextlib
import logging
import math

import attrs
import trio

from actors import ActorContext, ActorExited, ActorRef, StartFailed
from hermes.model.types import Usage
from hermes.session import (
    ChildHost,
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

from .output import check_output, retry_prompt
from .progress import Progress
from .tasks import TaskSpec

log = logging.getLogger(__name__)


@attrs.frozen(slots=True, kw_only=True)
class ChildPlan:
    """Everything a driver needs, prepared by the supervisor."""

    subagent_id: str
    parent_session_id: str
    task: TaskSpec
    config: SessionConfig
    deps: SessionDeps
    host: ChildHost | None
    prompt: str
    schema_retries: int
    close_timeout: float


@attrs.define(slots=True)
class RunOutcome:
    """How the child's work ended, as its driver saw it."""

    end: TurnEnd | None
    """The last turn's end (None: the child never ran a turn)."""
    text: str = ""
    detail: str = ""
    usage: Usage = attrs.field(factory=Usage)
    iterations: int = 0
    output: object = None
    output_error: str | None = None


class ChildDriver:
    """Starts and drives one child session; see the module docstring."""

    def __init__(self, plan: ChildPlan, progress: Progress) -> None:
        self.plan = plan
        self.progress = progress
        self.session: ActorRef | None = None
        """The child session, once it runs (steers and interrupts go straight to it)."""
        self.outcome: RunOutcome | None = None
        self.stop_requested: str | None = None
        """Set by the supervisor before the session is up: stop as soon as it is."""
        self._closed = False

    async def run(self, ctx: ActorContext) -> None:
        """The whole task, as an owned task of the supervisor (``ctx`` is its context).

        Never raises but ``Cancelled``: a failure here is this task's failure,
        reported in ``outcome``, not the supervisor's crash.
        """
        try:
            await self._run(ctx)
        except Exception as error:
            log.exception("subagent %s: its driver failed", self.plan.subagent_id)
            outcome = self.outcome or RunOutcome(None)
            outcome.end = None
            outcome.detail = f"its driver failed: {type(error).__name__}: {error}"
            self.outcome = outcome
        await self._dispose()  # not on cancellation: whoever cancelled kills the session

    async def _dispose(self) -> None:
        """Leave no child session behind: a closed one is stopping by itself (given
        a moment to finish); one the driver never closed (it failed) is killed."""
        session = self.session
        if session is None or not session.is_alive:
            return
        if self._closed:
            with trio.move_on_after(self.plan.close_timeout):
                await session.wait_exited()
        if session.is_alive:
            await session.kill()

    async def _run(self, ctx: ActorContext) -> None:
        plan = self.plan
        store = plan.deps.store
        self.progress.touch("creating the child session")
        try:
            info = await store.create_session(
                model=plan.config.model, title=plan.config.title, parent_id=plan.parent_session_id
            )
        except StoreError as error:
            self.outcome = RunOutcome(None, detail=f"the child session was not created: {error}")
            return
        self.progress.session_id = info.id
        hub = EventHub(info.id)
        hub.observe(self.progress.observe)
        actor = SessionActor(plan.config, plan.deps, info.id, hub)
        try:
            # Brutal on a stop, as its driver is: a child is never left half-stopped.
            self.session = await ctx.spawn(actor, name=plan.subagent_id, shutdown=0)
        except StartFailed as error:
            self.outcome = RunOutcome(
                None, detail=f"the child session did not start: {error.reason.describe()}"
            )
            return
        outcome = RunOutcome(None)
        self.outcome = outcome
        if self.stop_requested is not None:
            outcome.detail = self.stop_requested
            outcome.end = TurnEnd.INTERRUPTED
        else:
            await self._drive(self.session, outcome)
        await self._close(self.session)

    async def _turn(self, session: ActorRef, text: str, outcome: RunOutcome) -> TurnResult | None:
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

    async def _drive(self, session: ActorRef, outcome: RunOutcome) -> None:
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
        """Close the child: processes killed and reaped, the session marked ended."""
        self.progress.touch("closing")
        # ActorExited: already gone, and stopping us stops nothing more.
        with trio.move_on_after(self.plan.close_timeout), contextlib.suppress(ActorExited):
            await session.call(Close("subagent finished"), timeout=self.plan.close_timeout)
        self._closed = True
