"""``Scheduler``: the actor that owns the jobs, sleeps until the next one is due, and runs it.

It loads every job from the store when it starts, keeps them in memory with a
heap of due times, and arms one actor timer (``ctx.send_after``) for the
earliest; nothing polls the table. A timer never sleeps longer than
``REANCHOR`` seconds, so a wall clock that jumped (NTP, a suspended laptop)
is noticed within that bound.

A due job's run is an owned task of the scheduler (``ctx.start_task``,
``notify``). It runs the job's pre-run script first, if it has one
(``script.py``: its wake gate may skip the model call), builds the run's
message (``prompt.py``), and hands it to the ``runner`` it was given (in the
daemon, a fresh session's turn through the sessions manager;
``hermes/daemon/cron_runner.py``); then it delivers the result to the job's
target (``delivery.py``) and records the run with what the delivery did.
A failed run is recorded like any other outcome, never silent, and never
crashes the scheduler. Overlap policy when a job comes due while its previous
run still runs: ``skip`` (recorded as ``skipped``), ``queue`` (one run waits and
starts when the running one ends; more are skipped), ``cancel`` (the running
one is cancelled, recorded ``cancelled``, and the new one starts).

Missed runs (the daemon was down when a job was due; the seeds do not decide
this, Hermes' scheduler does): a job missed by no more than its grace (half
its period, from 2 min to 2 h) runs once at start; one missed by more is not
run, a ``missed`` outcome is recorded and it moves to its next time. Never
more than one catch-up run per job.
"""

from __future__ import annotations

import heapq
import logging
import math
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import trio

from actors import Actor, ActorContext, OwnedTask, TaskEnded, Timer
from hermes import codec
from hermes.store import StoreClient, StoreError
from hermes.store import cron_queries as q
from hermes.store.cron_queries import CronJob

from .delivery import Deliverer, RunReport
from .jobs import JobError, checked_prompt, edited, new_job
from .prompt import job_prompt
from .requests import (
    AddJob,
    CronFailed,
    EditJob,
    EmergencyStop,
    GetJob,
    JobRuns,
    ListJobs,
    PauseJob,
    RemoveJob,
    ResumeJob,
    RunJob,
)
from .schedule import Schedule, ScheduleError, grace, next_run, parse_schedule
from .script import SCRIPT_TIMEOUT, ScriptError, ScriptRun, run_script, script_place

log = logging.getLogger("hermes.cron")

REANCHOR = 300.0
"""Longest single sleep (seconds): the wall clock is read again at least this often."""
STORE_RETRY = 30.0
"""After the store refused to record a fire, due jobs wait this long (trio seconds) before
the next try: a full disk must not make the scheduler spin or crash."""


@attrs.frozen(slots=True)
class RunOutcome:
    """What a run did: ``ok``, ``failed``, ``timeout``, ``cancelled`` or a turn's end."""

    outcome: str
    detail: str = ""
    session_id: str | None = None
    published: str | None = None
    """The runner published the result on the run's session stream (an ``events`` target):
    what it says of that; None when it did not."""


Runner = Callable[[CronJob, str], Awaitable[RunOutcome]]
"""Runs one job once with the run's message and says how it went (raising is recorded
as ``failed``)."""
NOT_DELIVERED = frozenset({"skipped", "cancelled", "missed"})
"""Outcomes with nothing to deliver: no run took place (or it was stopped on purpose)."""


@attrs.frozen(slots=True)
class CronDeps:
    """What the scheduler works with, found when it starts (``Locate``)."""

    store: StoreClient
    runner: Runner
    estop: Path | None = None
    """The emergency-stop file (seed #218): while it exists nothing runs."""
    scripts: Path | None = None
    """The folder every pre-run script must be in (None: jobs cannot have scripts)."""
    deliverer: Deliverer = attrs.field(factory=Deliverer)
    """Delivers results to the jobs' targets (sessions only if it was given a sink)."""
    script_timeout: float = SCRIPT_TIMEOUT
    env_passthrough: tuple[str, ...] = ()
    """Secret-looking variables pre-run scripts still get (``[tools] env_passthrough``)."""


Locate = Callable[[ActorContext], CronDeps]
"""Called in ``on_start``: the store, the runner and the stop file (found in the actor tree)."""
ESTOP_DETAIL = "the emergency stop is on (hermes resume clears it)"


class JobNotFound(LookupError):
    pass


@attrs.define(slots=True)
class _Run:
    task: OwnedTask
    scheduled_for: float | None
    pending: bool = False
    """Another run waits to start when this one ends (queue, cancel)."""
    cancelled_why: str | None = None
    session_id: list[str] = attrs.Factory(list)


@attrs.frozen(slots=True)
class _Tick:
    pass


def wall_clock() -> float:
    return time.time()


class Scheduler(Actor):
    """See the module docstring. ``clock`` is wall time (tests pass one on trio's clock)."""

    def __init__(self, locate: Locate, clock: Callable[[], float] = wall_clock) -> None:
        self.locate = locate
        self.clock = clock
        self.jobs: dict[str, CronJob] = {}
        self.schedules: dict[str, Schedule] = {}
        self.heap: list[tuple[float, str]] = []
        self.running: dict[str, _Run] = {}
        self.tasks: dict[OwnedTask, str] = {}
        self.timer: Timer | None = None
        self.retry_at = -math.inf
        """Trio time before which nothing fires again (the store failed)."""

    async def on_start(self) -> None:
        deps = self.locate(self.ctx)
        self.store, self.runner, self.estop = deps.store, deps.runner, deps.estop
        self.scripts, self.deliverer = deps.scripts, deps.deliverer
        self.script_timeout, self.env_passthrough = deps.script_timeout, deps.env_passthrough
        now = self.clock()
        for job in await self.store.request(q.ListJobs(), timeout=30.0):
            try:
                schedule = parse_schedule(job.schedule, job.tz, now=0.0)
            except ScheduleError as exc:  # a row this build cannot read: say so, keep the rest
                log.error("cron job %s has an unusable schedule, paused: %s", job.id, exc)
                job = attrs.evolve(job, state="paused", last_detail=f"unusable schedule: {exc}")
                await self._save(job)
                self.jobs[job.id] = job
                continue
            self.jobs[job.id] = job
            self.schedules[job.id] = schedule
            if job.state == "active":
                await self._catch_up(job, schedule, now)
        self._arm()

    # -- scheduling --------------------------------------------------------------------

    async def _catch_up(self, job: CronJob, schedule: Schedule, now: float) -> None:
        due = job.next_run_at
        if due is None:
            due = next_run(schedule, now)
            job = await self._save(attrs.evolve(job, next_run_at=due))
            if due is None:
                return
        if due > now or now - due <= grace(schedule, due):
            self._push(job.id, due)
            return
        following = next_run(schedule, now)
        await self._record(job.id, due, now, now, "missed", "the daemon was not running")
        state = "done" if following is None else job.state
        await self._save(attrs.evolve(self.jobs[job.id], next_run_at=following, state=state))
        if following is not None:
            self._push(job.id, following)

    def _push(self, job_id: str, due: float) -> None:
        heapq.heappush(self.heap, (due, job_id))

    def _arm(self) -> None:
        """One timer, for the earliest live entry of the heap."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        heap = self.heap
        while heap:
            due, job_id = heap[0]
            job = self.jobs.get(job_id)
            if job is not None and job.state == "active" and job.next_run_at == due:
                break
            heapq.heappop(heap)  # stale: removed, paused, edited
        if not heap:
            return
        delay = min(REANCHOR, max(0.0, heap[0][0] - self.clock()))
        delay = max(delay, self.retry_at - trio.current_time())
        self.timer = self.ctx.send_after(delay, _Tick())

    async def _fire_due(self) -> None:
        now = self.clock()
        while self.heap and self.heap[0][0] <= now:
            due, job_id = heapq.heappop(self.heap)
            job = self.jobs.get(job_id)
            if job is None or job.state != "active" or job.next_run_at != due:
                continue
            schedule = self.schedules[job_id]
            following = next_run(schedule, due)
            if following is not None and following <= now:
                following = next_run(schedule, now)  # late: never a burst of runs
            state = "done" if following is None else "active"
            try:
                await self._save(attrs.evolve(job, next_run_at=following, state=state))
            except StoreError as error:  # not run: a run the store cannot record is lost
                log.error("cron job %s not fired (retry in %gs): %s", job_id, STORE_RETRY, error)
                self._push(job_id, due)
                self.retry_at = trio.current_time() + STORE_RETRY
                return
            if following is not None:
                self._push(job_id, following)
            if self.stopped():
                await self._record(job_id, due, now, now, "skipped", ESTOP_DETAIL)
                continue
            await self._start(job_id, due)

    async def _start(self, job_id: str, scheduled_for: float | None) -> None:
        """Start a run now, or apply the overlap policy to the one running."""
        job = self.jobs[job_id]
        current = self.running.get(job_id)
        if current is None:
            self._launch(job_id, scheduled_for)
            return
        now = self.clock()
        if job.overlap == "queue" and not current.pending:
            current.pending = True
            return
        if job.overlap == "cancel":
            current.pending = True
            current.cancelled_why = "cancelled: the next run of the job replaced it"
            current.task.cancel()
            return
        why = "one run already queued" if job.overlap == "queue" else "the previous run still runs"
        await self._record(job_id, scheduled_for, now, now, "skipped", why)

    def _launch(self, job_id: str, scheduled_for: float | None) -> None:
        job = self.jobs[job_id]

        async def body() -> None:
            await self._run(job, run)

        task = self.ctx.start_task(body, name=f"run-{job_id}", notify=True)
        run = _Run(task, scheduled_for)
        self.running[job_id] = run
        self.tasks[task] = job_id

    async def _attempt(self, job: CronJob) -> RunOutcome:
        """The pre-run script and its wake gate (seeds #10, #11), then the runner."""
        script: ScriptRun | None = None
        if job.script is not None:
            try:
                path, cwd = await trio.to_thread.run_sync(
                    script_place, job.script, self.scripts, job.cwd
                )
            except ScriptError as error:
                return RunOutcome("failed", f"pre-run script refused: {error}")
            script = await run_script(
                path, cwd=cwd, timeout=self.script_timeout, keep=self.env_passthrough
            )
            if not script.wake:
                said = "printed nothing" if not script.output.strip() else "said wakeAgent: false"
                return RunOutcome("skipped", f"the pre-run script {said}: no model call")
        return await self.runner(job, job_prompt(job, self.clock(), script))

    async def _run(self, job: CronJob, run: _Run) -> None:
        started = self.clock()
        try:
            result = await self._attempt(job)
        except trio.Cancelled:
            why = run.cancelled_why or "cancelled: the scheduler stopped"
            with trio.CancelScope(shield=True), trio.move_on_after(5.0):
                finished = self.clock()
                await self._record(job.id, run.scheduled_for, started, finished, "cancelled", why)
            raise
        except Exception as error:
            log.warning("cron job %s failed", job.id, exc_info=error)
            result = RunOutcome("failed", f"{type(error).__name__}: {error}")
        finished = self.clock()
        delivery = None
        if job.deliver is not None and result.outcome not in NOT_DELIVERED:
            report = RunReport(
                job_id=job.id, name=job.name, outcome=result.outcome, detail=result.detail,
                session_id=result.session_id, scheduled_for=run.scheduled_for,
                started_at=started, finished_at=finished,
            )  # fmt: skip
            delivery = await self.deliverer.deliver(job.deliver, report, result.published)
            if delivery.startswith("failed"):
                log.warning("cron job %s: delivery to %s %s", job.id, job.deliver, delivery)
        await self._record(
            job.id, run.scheduled_for, started, finished, result.outcome, result.detail,
            result.session_id, delivery,
        )  # fmt: skip

    async def _ended(self, task: OwnedTask) -> None:
        job_id = self.tasks.pop(task, None)
        if job_id is None:
            return
        run = self.running.pop(job_id, None)
        if run is not None and run.pending and job_id in self.jobs:
            self._launch(job_id, run.scheduled_for)

    # -- store writes ------------------------------------------------------------------

    async def _save(self, job: CronJob, *, create: bool = False) -> CronJob:
        stored = await self.store.request(q.SaveJob(job, create=create), timeout=10.0)
        self.jobs[job.id] = stored
        return stored

    async def _record(
        self,
        job_id: str,
        scheduled_for: float | None,
        started: float,
        finished: float,
        outcome: str,
        detail: str,
        session_id: str | None = None,
        delivery: str | None = None,
    ) -> None:
        if job_id not in self.jobs:
            return  # removed meanwhile: its history went with it
        try:
            await self.store.request(
                q.RecordRun(
                    job_id, scheduled_for, started, finished, outcome, detail, session_id, delivery
                ),
                timeout=10.0,
            )
        except StoreError as error:
            log.error("cron job %s: run outcome %s not recorded: %s", job_id, outcome, error)
        job = self.jobs.get(job_id)
        if job is not None:
            self.jobs[job_id] = attrs.evolve(
                job, last_run_at=started, last_outcome=outcome, last_detail=detail[:4000],
                last_session_id=session_id or job.last_session_id, runs=job.runs + 1,
            )  # fmt: skip

    # -- the mailbox -------------------------------------------------------------------

    async def receive(self, message: object) -> object:
        """A request's failure is its answer (``CronFailed``), never the scheduler's crash."""
        if isinstance(message, _Tick):
            self.timer = None
            await self._fire_due()
            self._arm()
            return None
        if isinstance(message, TaskEnded):
            await self._ended(message.task)
            return None
        try:
            answer = await self._handle(message)
        except (JobError, ScheduleError, JobNotFound, StoreError) as error:
            return CronFailed(error)
        except Exception as error:
            log.error("the scheduler failed a %s", type(message).__name__, exc_info=error)
            return CronFailed(error)
        self._arm()
        return answer

    def _job(self, job_id: object) -> CronJob:
        job = self.jobs.get(job_id) if isinstance(job_id, str) else None
        if job is None:
            raise JobNotFound(f"no cron job with id {job_id!r}")
        return job

    def view(self, job: CronJob) -> dict[str, Any]:
        """A job as the surfaces show it."""
        shown: dict[str, Any] = codec.to_plain(job)
        shown["running"] = job.id in self.running
        return shown

    async def _handle(self, message: object) -> Any:
        now = self.clock()
        if isinstance(message, AddJob):
            if not isinstance(message.fields, dict):
                raise JobError(f"fields must be a dict, got {type(message.fields).__name__}")
            job, schedule = new_job(
                message.fields, now=now, scripts=self.scripts, origin=message.origin
            )
            due = next_run(schedule, now)
            job = attrs.evolve(job, next_run_at=due, state="paused" if message.paused else "active")
            job = await self._save(job, create=True)
            self.schedules[job.id] = schedule
            if due is not None:
                self._push(job.id, due)
            log.info("cron job %s added: %s", job.id, job.schedule)
            return self.view(job)
        if isinstance(message, ListJobs):
            return [self.view(job) for job in self.jobs.values()]
        if isinstance(message, GetJob):
            return self.view(self._job(message.job_id))
        if isinstance(message, EmergencyStop):
            return self._emergency(message.on)
        if isinstance(message, JobRuns):
            self._job(message.job_id)
            runs = await self.store.request(q.ListRuns(message.job_id, message.limit))
            return [codec.to_plain(run) for run in runs]
        job = self._job(getattr(message, "job_id", None))
        if isinstance(message, EditJob):
            if not isinstance(message.fields, dict):
                raise JobError(f"fields must be a dict, got {type(message.fields).__name__}")
            changed, schedule = edited(job, message.fields, now=now, scripts=self.scripts)
            if changed.schedule != job.schedule or changed.tz != job.tz:
                due = next_run(schedule, now)
                state = job.state if job.state != "done" or due is None else "active"
                changed = attrs.evolve(changed, next_run_at=due, state=state)
            job = await self._save(changed)
            self.schedules[job.id] = schedule
            self._requeue(job)
            return self.view(job)
        if isinstance(message, PauseJob):
            return self.view(await self._save(attrs.evolve(job, state="paused", updated_at=now)))
        if isinstance(message, ResumeJob):
            if job.state == "done":
                raise JobError(f"cron job {job.id} has no more runs (its one shot ran)")
            due = job.next_run_at
            if due is None or due < now:  # runs missed while paused are not made up
                due = next_run(self.schedules[job.id], now)
            job = await self._save(
                attrs.evolve(job, state="active", next_run_at=due, updated_at=now)
            )
            self._requeue(job)
            return self.view(job)
        if isinstance(message, RunJob):
            if self.stopped():
                raise JobError(f"cron job {job.id} not run: {ESTOP_DETAIL}")
            checked_prompt(job.prompt)  # scanned again: the rules may be newer than the row
            await self._start(job.id, None)
            return self.view(self.jobs[job.id])
        if isinstance(message, RemoveJob):
            run = self.running.get(job.id)
            if run is not None:
                run.pending = False
                run.cancelled_why = "cancelled: the job was removed"
                run.task.cancel()
            self.jobs.pop(job.id, None)  # first: the cancelled run records nothing now
            self.schedules.pop(job.id, None)
            try:
                await self.store.request(q.DeleteJob(job.id), timeout=10.0)
            except StoreError:
                self.jobs[job.id] = job  # still stored: still scheduled
                self.schedules[job.id] = parse_schedule(job.schedule, job.tz, now=0.0)
                self._requeue(job)
                raise
            return {"removed": job.id, "run_cancelled": run is not None}
        raise JobError(f"the scheduler does not handle {type(message).__name__}")

    def stopped(self) -> bool:
        """The emergency stop is on: its file exists (whatever it holds, seed #218)."""
        return self.estop is not None and self.estop.exists()

    def _emergency(self, on: bool | None) -> dict[str, Any]:
        """Set (True), clear (False) or read (None) the emergency stop."""
        cancelled = 0
        if on is not None and self.estop is None:
            raise JobError("this scheduler has no emergency-stop file")
        if on and self.estop is not None:
            self.estop.write_text(f"set at {time.time():.0f}\n")
            for run in self.running.values():
                run.pending = False
                run.cancelled_why = f"cancelled: {ESTOP_DETAIL}"
                run.task.cancel()
                cancelled += 1
            log.warning("emergency stop on: %d running job runs cancelled", cancelled)
        elif on is False and self.estop is not None:
            self.estop.unlink(missing_ok=True)
            log.warning("emergency stop cleared")
        return {"stopped": self.stopped(), "runs_cancelled": cancelled}

    def _requeue(self, job: CronJob) -> None:
        if job.state == "active" and job.next_run_at is not None:
            self._push(job.id, job.next_run_at)


__all__ = [
    "ESTOP_DETAIL",
    "REANCHOR",
    "CronDeps",
    "JobNotFound",
    "Locate",
    "RunOutcome",
    "Runner",
    "Scheduler",
]
