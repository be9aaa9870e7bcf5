"""The scheduler's mailbox: one frozen attrs ``Call`` per request.

Every answer is plain data (a job as a dict) or ``CronFailed``, which
``CronClient`` raises: a bad request never crashes the scheduler.
"""

from __future__ import annotations

from typing import Any

import attrs

from actors import Call


@attrs.frozen(slots=True)
class CronFailed:
    error: Exception


@attrs.frozen(slots=True)
class AddJob(Call["dict[str, Any] | CronFailed"]):
    fields: dict[str, Any]
    """``schedule``, ``prompt``; optional ``name tz cwd model toolsets overlap timeout
    script deliver``."""
    paused: bool = False
    origin: str | None = None
    """The session whose model asked for the job (the ``cronjob`` tool); None: a person."""


@attrs.frozen(slots=True)
class EditJob(Call["dict[str, Any] | CronFailed"]):
    job_id: str
    fields: dict[str, Any]


@attrs.frozen(slots=True)
class PauseJob(Call["dict[str, Any] | CronFailed"]):
    job_id: str


@attrs.frozen(slots=True)
class ResumeJob(Call["dict[str, Any] | CronFailed"]):
    job_id: str


@attrs.frozen(slots=True)
class RunJob(Call["dict[str, Any] | CronFailed"]):
    """Run now (the overlap policy applies); the schedule is not moved."""

    job_id: str


@attrs.frozen(slots=True)
class RemoveJob(Call["dict[str, Any] | CronFailed"]):
    """Remove the job; a running run is cancelled."""

    job_id: str


@attrs.frozen(slots=True)
class GetJob(Call["dict[str, Any] | CronFailed"]):
    job_id: str


@attrs.frozen(slots=True)
class ListJobs(Call["list[dict[str, Any]] | CronFailed"]):
    pass


@attrs.frozen(slots=True)
class JobRuns(Call["list[dict[str, Any]] | CronFailed"]):
    job_id: str
    limit: int = 20


@attrs.frozen(slots=True)
class EmergencyStop(Call["dict[str, Any] | CronFailed"]):
    """``on``: stop every run now and skip every fire until cleared (seed #218); ``False``
    clears it, ``None`` only reads it. Answered ``{stopped, runs_cancelled}``."""

    on: bool | None = None
