"""Scheduled jobs (issue 27): durable rows in the store, one supervised scheduler.

| module | one job |
|---|---|
| ``schedule.py`` | parse cron / ``every 30m`` / ``in 2h`` / ISO times; the next run; grace |
| ``jobs.py`` | build and edit job rows from what a surface sends, with precise errors |
| ``requests.py`` | the scheduler's mailbox |
| ``scheduler.py`` | ``Scheduler``: sleeps until the next due job, runs it, records the outcome |
| ``client.py`` | ``CronClient`` (typed calls) and ``cron_tree`` (the daemon's ``cron`` child) |

The rows live in ``hermes/store/cron_queries.py``; the daemon's runner (a fresh
session turn per run) in ``hermes/daemon/cron_runner.py``. See docs/cron.md.
"""

from .client import CronClient, cron_tree
from .jobs import JobError
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
from .schedule import Schedule, ScheduleError, next_run, parse_schedule
from .scheduler import ESTOP_DETAIL, CronDeps, JobNotFound, Locate, Runner, RunOutcome, Scheduler

__all__ = [
    "ESTOP_DETAIL",
    "AddJob",
    "CronClient",
    "CronDeps",
    "CronFailed",
    "EditJob",
    "EmergencyStop",
    "GetJob",
    "JobError",
    "JobNotFound",
    "JobRuns",
    "ListJobs",
    "Locate",
    "PauseJob",
    "RemoveJob",
    "ResumeJob",
    "RunJob",
    "RunOutcome",
    "Runner",
    "Schedule",
    "ScheduleError",
    "Scheduler",
    "cron_tree",
    "next_run",
    "parse_schedule",
]
