"""The daemon's cron runner: each run of a job is a fresh session's turn.

The scheduler (``hermes/cron``) calls ``SessionRunner.__call__`` for a due
job. It creates a session through the sessions manager (so the run is
supervised, listed, watched and cancelled like any session), submits the
job's prompt behind a short unattended-run header (seed #45: the cron hint
and the run's time), and waits for the turn. The job's ``timeout`` is an
inactivity limit (seed #186): every event of the session pushes the deadline
out; past it the turn is cancelled and the outcome is ``timeout``. The
session is closed when the run ends, however it ends (cancelled runs too).
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import trio

from actors import ActorContext
from hermes.cron import CronDeps, Locate, RunOutcome
from hermes.session import TurnEnd
from hermes.store import StoreClient
from hermes.store.cron_queries import CronJob

from .errors import ShuttingDown
from .manager import Close, Create, ManagerClient
from .settings import Settings

log = logging.getLogger("hermes.cron.runner")

CLOSE_TIMEOUT = 15.0
ESTOP_FILE = "ESTOP"
"""In the data directory: while it exists no job runs (``hermes pause``, seed #218)."""
TURN_CALL_LIMIT = 10 * 365 * 86400.0
"""The turn's own call is not what bounds a run: the inactivity deadline is."""


def job_prompt(job: CronJob, now: float) -> str:
    """The run's message: the unattended-run header, then the job's prompt (seed #45)."""
    when = datetime.fromtimestamp(now, ZoneInfo(job.tz)).isoformat(timespec="seconds")
    return (
        f"[Scheduled job {job.name!r} ({job.id}), run at {when}. This run is unattended: "
        "nobody is watching to answer questions or approve commands. Do the task and end "
        "with your final answer, which is recorded as the run's result.]\n\n" + job.prompt
    )


class SessionRunner:
    """Runs a job as a fresh session's turn (see the module docstring)."""

    def __init__(self, manager: ManagerClient) -> None:
        self.manager = manager

    async def __call__(self, job: CronJob) -> RunOutcome:
        try:
            view = await self.manager.call(Create(title=f"cron: {job.name}", cwd=job.cwd))
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
                        result = await handle.run(
                            job_prompt(job, time.time()), timeout=TURN_CALL_LIMIT
                        )
                    nursery.cancel_scope.cancel()
            if scope.cancelled_caught:
                reason = f"cron run timed out: no activity for {job.timeout:g}s"
                return RunOutcome("timeout", reason, session_id)
            outcome = "ok" if result.reason is TurnEnd.COMPLETED else result.reason.value
            return RunOutcome(outcome, result.text or result.detail, session_id)
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
        parent = ctx.parent
        assert parent is not None
        root = parent.path.rsplit("/", 1)[0]
        store = ctx.system.lookup(root + "/store")
        sessions = ctx.system.lookup(root + "/sessions")
        if store is None or sessions is None:
            raise RuntimeError("the store and the sessions manager must start before cron")
        return CronDeps(
            StoreClient(store, lane=settings.store_lane),
            SessionRunner(ManagerClient(sessions, view=settings.sessions_view)),
            settings.config.data_dir(settings.paths) / ESTOP_FILE,
        )

    return found
