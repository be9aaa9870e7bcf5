"""The ``cron_jobs`` and ``cron_runs`` tables: scheduled jobs and what their runs did.

A job is one row (``CronJob``); the scheduler (``hermes/cron``) owns the
schedule logic and writes whole rows with ``SaveJob``. Each finished run is a
``cron_runs`` row, and ``RecordRun`` also notes it on the job (last run, its
outcome) in the same transaction. The store checks only what the table
needs (ids, states, policies, numbers); the schedule text is checked by
``hermes.cron.schedule`` before it gets here (and the script path and delivery
target by ``hermes.cron.jobs``). Migration 10 added ``script``, ``deliver``,
``origin`` and the runs' ``delivery``. Registered with ``operation``;
callers send these with ``StoreClient.request``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, ClassVar

import apsw
import attrs

from .errors import InvalidRequest
from .operations import Abort, operation
from .requests import Read, SideWrite

JOB_STATES = ("active", "paused", "done")
"""``done``: a one-shot job that has run (or was missed); it stays listed until removed."""
OVERLAP_POLICIES = ("skip", "queue", "cancel")
MAX_CRON_ROWS = 10_000


@attrs.frozen(slots=True, kw_only=True)
class CronJob:
    """One scheduled job as stored (times are wall-clock seconds since the epoch)."""

    id: str
    name: str
    schedule: str
    """As the person wrote it (``every 30m``, ``0 9 * * 1-5``), or ``at <ISO time>``."""
    tz: str
    prompt: str
    cwd: str | None = None
    model: str | None = None
    toolsets: tuple[str, ...] | None = None
    overlap: str = "skip"
    timeout: float = 600.0
    """Seconds without activity before a run is cut off (0: no limit; seed #186)."""
    state: str = "active"
    created_at: float = 0.0
    updated_at: float = 0.0
    next_run_at: float | None = None
    last_run_at: float | None = None
    last_outcome: str | None = None
    last_detail: str | None = None
    last_session_id: str | None = None
    runs: int = 0
    script: str | None = None
    """The pre-run script, relative to the data directory's ``scripts`` folder (migration 10)."""
    deliver: str | None = None
    """Where a run's final answer goes: ``session:<id>``, ``file:<path>``, ``webhook:<url>``,
    ``events``; None: only recorded here."""
    origin: str | None = None
    """The session whose model created the job (the ``cronjob`` tool); None: a person."""


@attrs.frozen(slots=True, kw_only=True)
class CronRun:
    """One finished run of a job."""

    id: int
    job_id: str
    scheduled_for: float | None
    started_at: float
    finished_at: float
    outcome: str
    """``ok``, ``failed``, ``timeout``, ``cancelled``, ``skipped``, ``missed``, or a turn's end."""
    detail: str
    session_id: str | None
    delivery: str | None = None
    """What delivering the result did (``ok: ...`` or ``failed: ...``); None: no target."""


@attrs.frozen(slots=True)
class SaveJob(SideWrite[CronJob]):
    """Insert or replace a job's row; answers the row stored."""

    op: ClassVar[str] = "save_cron_job"

    job: CronJob
    create: bool = False
    """Refuse an id that exists (a new job) instead of replacing it."""


@attrs.frozen(slots=True)
class DeleteJob(SideWrite[bool]):
    """Remove a job and its runs; answers whether it existed."""

    op: ClassVar[str] = "delete_cron_job"

    job_id: str


@attrs.frozen(slots=True)
class RecordRun(SideWrite[CronRun]):
    """Record a finished run and note it on its job (an unknown job is refused)."""

    op: ClassVar[str] = "record_cron_run"

    job_id: str
    scheduled_for: float | None
    started_at: float
    finished_at: float
    outcome: str
    detail: str = ""
    session_id: str | None = None
    delivery: str | None = None


@attrs.frozen(slots=True)
class ListJobs(Read[list[CronJob]]):
    """Every job, oldest first."""

    op: ClassVar[str] = "list_cron_jobs"


@attrs.frozen(slots=True)
class ListRuns(Read[list[CronRun]]):
    """A job's runs, newest first."""

    op: ClassVar[str] = "list_cron_runs"

    job_id: str
    limit: int = 50


_JOB_COLUMNS = (
    "id, name, schedule, tz, prompt, cwd, model, toolsets, overlap, timeout, state, "
    "created_at, updated_at, next_run_at, last_run_at, last_outcome, last_detail, "
    "last_session_id, runs, script, deliver, origin"
)
_RUN_COLUMNS = (
    "id, job_id, scheduled_for, started_at, finished_at, outcome, detail, session_id, delivery"
)
_DETAIL_LIMIT = 4000


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _job(row: Sequence[Any]) -> CronJob:
    return CronJob(
        id=row[0],
        name=row[1],
        schedule=row[2],
        tz=row[3],
        prompt=row[4],
        cwd=row[5],
        model=row[6],
        toolsets=None if row[7] is None else tuple(json.loads(row[7])),
        overlap=row[8],
        timeout=float(row[9]),
        state=row[10],
        created_at=float(row[11]),
        updated_at=float(row[12]),
        next_run_at=_opt_float(row[13]),
        last_run_at=_opt_float(row[14]),
        last_outcome=row[15],
        last_detail=row[16],
        last_session_id=row[17],
        runs=int(row[18]),
        script=row[19],
        deliver=row[20],
        origin=row[21],
    )


def _run(row: Sequence[Any]) -> CronRun:
    return CronRun(
        id=int(row[0]),
        job_id=row[1],
        scheduled_for=_opt_float(row[2]),
        started_at=float(row[3]),
        finished_at=float(row[4]),
        outcome=row[5],
        detail=row[6],
        session_id=row[7],
        delivery=row[8],
    )


def _check_text(op: str, field: str, value: object, *, empty: bool = False) -> None:
    if not isinstance(value, str) or (not value and not empty):
        raise InvalidRequest(op, f"{field} must be a non-empty str, got {value!r}")


def _check_job(op: str, job: object) -> CronJob:
    if not isinstance(job, CronJob):
        raise InvalidRequest(op, f"job must be a CronJob, got {type(job).__name__}")
    for field in ("id", "name", "schedule", "tz", "prompt"):
        _check_text(op, field, getattr(job, field))
    if job.state not in JOB_STATES:
        raise InvalidRequest(op, f"state must be one of {', '.join(JOB_STATES)}, got {job.state!r}")
    if job.overlap not in OVERLAP_POLICIES:
        raise InvalidRequest(
            op, f"overlap must be one of {', '.join(OVERLAP_POLICIES)}, got {job.overlap!r}"
        )
    if not isinstance(job.timeout, (int, float)) or not 0 <= job.timeout < math.inf:
        raise InvalidRequest(op, f"timeout must be a number of seconds >= 0, got {job.timeout!r}")
    if job.toolsets is not None and not all(isinstance(t, str) and t for t in job.toolsets):
        raise InvalidRequest(op, f"toolsets must be non-empty names, got {job.toolsets!r}")
    for field in ("script", "deliver", "origin"):
        if getattr(job, field) is not None:
            _check_text(op, field, getattr(job, field))
    return job


def get_job(conn: apsw.Connection, job_id: str) -> CronJob | None:
    """The job's row, or None."""
    row = conn.execute(f"SELECT {_JOB_COLUMNS} FROM cron_jobs WHERE id = ?", (job_id,)).get
    return None if row is None else _job(row)


@operation(SaveJob)
def save_job(conn: apsw.Connection, req: SaveJob, abort: Abort) -> CronJob:
    job = _check_job(req.op, req.job)
    if req.create and get_job(conn, job.id) is not None:
        raise InvalidRequest(req.op, f"a cron job with id {job.id!r} already exists")
    toolsets = None if job.toolsets is None else json.dumps(list(job.toolsets))
    conn.execute(
        f"INSERT OR REPLACE INTO cron_jobs ({_JOB_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            job.id, job.name, job.schedule, job.tz, job.prompt, job.cwd, job.model, toolsets,
            job.overlap, float(job.timeout), job.state, job.created_at, job.updated_at,
            job.next_run_at, job.last_run_at, job.last_outcome, job.last_detail,
            job.last_session_id, job.runs, job.script, job.deliver, job.origin,
        ),
    )  # fmt: skip
    stored = get_job(conn, job.id)
    assert stored is not None
    return stored


@operation(DeleteJob)
def delete_job(conn: apsw.Connection, req: DeleteJob, abort: Abort) -> bool:
    _check_text(req.op, "job_id", req.job_id)
    conn.execute("DELETE FROM cron_runs WHERE job_id = ?", (req.job_id,))
    conn.execute("DELETE FROM cron_jobs WHERE id = ?", (req.job_id,))
    return bool(conn.changes())


@operation(RecordRun)
def record_run(conn: apsw.Connection, req: RecordRun, abort: Abort) -> CronRun:
    op = req.op
    _check_text(op, "job_id", req.job_id)
    _check_text(op, "outcome", req.outcome)
    _check_text(op, "detail", req.detail, empty=True)
    if req.delivery is not None:
        _check_text(op, "delivery", req.delivery)
    detail = req.detail[:_DETAIL_LIMIT]
    if get_job(conn, req.job_id) is None:
        raise InvalidRequest(op, f"no cron job with id {req.job_id!r}")
    conn.execute(
        f"INSERT INTO cron_runs ({_RUN_COLUMNS}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            req.job_id, req.scheduled_for, req.started_at, req.finished_at, req.outcome,
            detail, req.session_id, None if req.delivery is None else req.delivery[:_DETAIL_LIMIT],
        ),
    )  # fmt: skip
    run_id = conn.last_insert_rowid()
    conn.execute(
        "UPDATE cron_jobs SET last_run_at = ?, last_outcome = ?, last_detail = ?, "
        "last_session_id = coalesce(?, last_session_id), runs = runs + 1 WHERE id = ?",
        (req.started_at, req.outcome, detail, req.session_id, req.job_id),
    )
    row = conn.execute(f"SELECT {_RUN_COLUMNS} FROM cron_runs WHERE id = ?", (run_id,)).get
    return _run(row)


@operation(ListJobs)
def list_jobs(conn: apsw.Connection, req: ListJobs, abort: Abort) -> list[CronJob]:
    rows = conn.execute(
        f"SELECT {_JOB_COLUMNS} FROM cron_jobs ORDER BY created_at, id LIMIT ?", (MAX_CRON_ROWS,)
    )
    return [_job(row) for row in rows]


@operation(ListRuns)
def list_runs(conn: apsw.Connection, req: ListRuns, abort: Abort) -> list[CronRun]:
    _check_text(req.op, "job_id", req.job_id)
    if type(req.limit) is not int or not 1 <= req.limit <= MAX_CRON_ROWS:
        raise InvalidRequest(
            req.op, f"limit must be an int from 1 to {MAX_CRON_ROWS}, got {req.limit!r}"
        )
    rows = conn.execute(
        f"SELECT {_RUN_COLUMNS} FROM cron_runs WHERE job_id = ? ORDER BY id DESC LIMIT ?",
        (req.job_id, req.limit),
    )
    return [_run(row) for row in rows]
