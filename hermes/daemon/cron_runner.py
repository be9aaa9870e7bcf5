"""The daemon's cron runner: each run of a job is a fresh session's turn.

The scheduler (``hermes/cron``) calls ``SessionRunner.__call__`` for a due
job with the run's message (``hermes.cron.prompt``: header, script output,
prompt). It creates a session through the sessions manager (so the run is
supervised, listed, watched and cancelled like any session) with the job's
model, working directory and toolsets (minus what no job has: seed #118,
``job_tools.py``; project context files only when the job has a working
directory, seed #45), submits the message and waits for the turn. The job's
``timeout`` is an inactivity limit (seed #186): every event of the session
pushes the deadline out; past it the turn is cancelled and the outcome is
``timeout``. A job delivering to ``events`` gets a ``cron.delivered`` event on
the run's session before the session is closed; the session is closed when
the run ends, however it ends (cancelled runs too).

``deliver_to_session`` is the scheduler's sink for ``session:<id>`` targets:
the run's report goes to that session as machine input (source ``cron``).
"""

from __future__ import annotations

import logging

import attrs
import trio

from actors import ActorContext, ActorSystem
from hermes.cron import CronDeps, Locate, RunOutcome
from hermes.cron.delivery import Deliverer, RunReport, SessionSink
from hermes.cron.script import SCRIPTS_DIR
from hermes.session import MachineInput, TurnEnd
from hermes.session.events import InputNoticed
from hermes.store import StoreClient
from hermes.store.cron_queries import CronJob

from .errors import ShuttingDown
from .estop import ESTOP_FILE
from .job_tools import NEVER_IN_JOBS
from .manager import Close, Create, ManagerClient
from .settings import Settings
from .siblings import siblings

log = logging.getLogger("hermes.cron.runner")

CLOSE_TIMEOUT = 15.0
TURN_CALL_LIMIT = 10 * 365 * 86400.0
"""The turn's own call is not what bounds a run: the inactivity deadline is."""


@attrs.frozen(slots=True)
class CronDelivered:
    """A scheduled run's result, on its own session's stream (a job delivering to ``events``)."""

    job: str
    name: str
    outcome: str
    result: str


class SessionRunner:
    """Runs a job as a fresh session's turn (see the module docstring)."""

    def __init__(self, manager: ManagerClient, *, allow_scheduling: bool = False) -> None:
        self.manager = manager
        self.without = NEVER_IN_JOBS if allow_scheduling else (*NEVER_IN_JOBS, "cronjob")

    async def __call__(self, job: CronJob, prompt: str) -> RunOutcome:
        create = Create(
            title=f"cron: {job.name}",
            cwd=job.cwd,
            model=job.model,
            toolsets=job.toolsets,
            without=self.without,
            context_files=False if job.cwd is None else None,
            scheduled=True,
        )
        try:
            view = await self.manager.call(create)
        except ShuttingDown as stopping:  # not a failure of the job
            return RunOutcome("skipped", str(stopping))
        session_id = view.id
        reason = "cron run finished"
        try:
            entry = await self.manager.lookup(session_id)
            handle = entry.handle
            scope = trio.CancelScope()

            def push() -> None:
                if job.timeout > 0:
                    scope.deadline = trio.current_time() + job.timeout

            push()
            with handle.subscribe(capacity=256) as sub:
                async with trio.open_nursery() as nursery:

                    async def watch() -> None:
                        async for _event in sub.receive:
                            push()

                    nursery.start_soon(watch)
                    with scope:
                        result = await handle.run(prompt, timeout=TURN_CALL_LIMIT)
                    nursery.cancel_scope.cancel()
            if scope.cancelled_caught:
                reason = f"cron run timed out: no activity for {job.timeout:g}s"
                outcome, detail = "timeout", reason
            else:
                outcome = "ok" if result.reason is TurnEnd.COMPLETED else result.reason.value
                detail = result.text or result.detail
            published = None
            if job.deliver == "events":
                entry.hub.publish(CronDelivered(job.id, job.name, outcome, detail))
                published = f"cron.delivered on session {session_id}'s event stream"
            return RunOutcome(outcome, detail, session_id, published)
        except trio.Cancelled:
            reason = "cron run cancelled"
            raise
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_TIMEOUT):
                try:  # closing also cancels a turn still running (a timeout, a cancel)
                    await self.manager.call(Close(session_id, reason), timeout=CLOSE_TIMEOUT)
                except Exception as error:
                    log.warning("cron session %s not closed: %s", session_id, error)


def locate(settings: Settings) -> Locate:
    """What the daemon's scheduler finds when it starts: the store and the sessions."""

    def found(ctx: ActorContext) -> CronDeps:
        store, sessions = siblings(ctx, "cron", "store", "sessions")
        manager = ManagerClient(sessions, view=settings.sessions_view)
        data_dir = settings.config.data_dir(settings.paths)
        allow = bool(settings.config.get("cron", "allow_agent_scheduling"))
        return CronDeps(
            StoreClient(store, lane=settings.store_lane),
            SessionRunner(manager, allow_scheduling=allow),
            data_dir / ESTOP_FILE,
            scripts=data_dir / SCRIPTS_DIR,
            deliverer=Deliverer(
                data_dir=data_dir, to_session=deliver_to_session(ctx.system, manager)
            ),
            env_passthrough=tuple(settings.config.get("tools", "env_passthrough")),
        )

    return found


def deliver_to_session(system: ActorSystem, manager: ManagerClient) -> SessionSink:
    """The sink of ``session:<id>`` targets: the report as machine input to that session
    (resumed if it is not running; a closed or unknown one fails the delivery)."""

    async def deliver(session_id: str, report: RunReport) -> None:
        entry = await manager.lookup(session_id)
        ref = system.lookup(entry.path)
        if ref is None:
            raise LookupError(f"session {session_id} stopped before the result reached it")
        text = report.as_text()
        notice = InputNoticed("cron", report.job_id, text)
        if not await ref.cast(MachineInput("cron", text, notice)):
            raise LookupError(f"session {session_id} stopped before the result reached it")

    return deliver
