"""``cronjob``: the model's way to schedule, list and change jobs, inside the seeds' gates.

The model reaches the same scheduler a person does (``hermes cron``), so every
rule of a person's request holds: the strict prompt scan at create, edit and
run (seed #119), the script path rules (#120: a path relative to the scripts
folder, already there; the model cannot put a script in that folder through
this tool), and no endpoint of its own (#143: ``base_url``, ``provider``,
``api_key`` are refused by name; a job always runs on the daemon's provider).
On top, what only the model is held to:

- **delivery**: a job it creates delivers to its own session (the default) or
  to ``events``; a file, a webhook or another session is for a person to set
  (``hermes cron edit JOB --deliver ...``), so a prompt cannot mail the
  results away;
- **toolsets** (#118): every name must be a tool or toolset of this daemon;
  ``cronjob`` itself is taken from every job's session at run time unless
  ``[cron] allow_agent_scheduling`` is set, as are the tools of the
  messaging and clarify sets when they exist.

The calling session's id (the job's ``origin`` and default target) is read
from the session's foreground-process ledger, the one per-session service
that carries it (``hermes.processes.ForegroundLedger``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import trio

from actors import ActorExited, CallTarget
from hermes.processes import ForegroundLedger
from hermes.procgroup import GroupLedger
from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome, ToolRegistry

from .client import CronClient
from .delivery import DeliveryError, parse_target
from .requests import (
    AddJob,
    EditJob,
    GetJob,
    JobRuns,
    ListJobs,
    PauseJob,
    RemoveJob,
    ResumeJob,
    RunJob,
)

ACTIONS = ("create", "list", "get", "edit", "pause", "resume", "run", "remove", "runs")
FIELDS = (
    "name", "schedule", "tz", "prompt", "cwd", "model", "toolsets", "overlap", "timeout",
    "script", "deliver",
)  # fmt: skip

INPUT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "job": {"type": "string", "description": "The job's id (all actions but create, list)."},
        "schedule": {
            "type": "string",
            "description": "A cron expression ('0 9 * * 1-5'), 'every 30m', 'in 2h', or an "
            "ISO time.",
        },
        "prompt": {
            "type": "string",
            "description": "What the job's run is asked, unattended, in a fresh session.",
        },
        "name": {"type": "string"},
        "tz": {"type": "string", "description": "IANA time zone of a cron expression (UTC)."},
        "cwd": {"type": "string", "description": "The run's working directory."},
        "model": {"type": "string", "description": "A model name for the run (the daemon's)."},
        "toolsets": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Only these tools or toolsets in the run (all when omitted).",
        },
        "overlap": {"type": "string", "enum": ["skip", "queue", "cancel"]},
        "timeout": {"type": "number", "description": "Seconds without activity (600; 0 none)."},
        "script": {
            "type": "string",
            "description": "A pre-run script, relative to the scripts folder: its output goes "
            'into the prompt; printing nothing or {"wakeAgent": false} skips the run.',
        },
        "deliver": {
            "type": "string",
            "description": "'origin' (this session, the default) or 'events'.",
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "required": ["action"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Schedule prompts to run later or repeatedly, each run an unattended fresh session "
    "whose final answer comes back to this session. Actions: create (schedule, prompt; "
    "optional name, tz, cwd, model, toolsets, overlap, timeout, script, deliver), list, "
    "get, edit (job and the fields to change), pause, resume, run (now), remove, runs "
    "(past runs of a job)."
)

SchedulerRef = Callable[[], CallTarget | None]
"""Finds the scheduler now (it may be between restarts: None)."""


def session_of(ctx: ToolContext) -> str | None:
    """The calling session's id (see the module docstring), None outside a session."""
    try:
        ledger = ctx.service(GroupLedger)  # type: ignore[type-abstract]
    except (LookupError, TypeError):
        return None
    return ledger.session_id if isinstance(ledger, ForegroundLedger) else None


class CronjobTool(Tool):
    """``cronjob`` (see the module docstring)."""

    name = "cronjob"
    description = DESCRIPTION
    input_schema = INPUT_SCHEMA
    kind = ToolKind.OTHER
    toolset = "cronjob"

    def __init__(self, scheduler: SchedulerRef, registry: ToolRegistry | None = None) -> None:
        self.scheduler = scheduler
        self.registry = registry
        """The daemon's tools, against which a job's toolsets are checked."""

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        action: str = args["action"]
        target = self.scheduler()
        if target is None:
            return ToolOutcome.error(
                "The scheduler is not running (restarting?); nothing was changed. Try again.",
                reason="unavailable",
            )
        try:
            message = self._request(action, args, session_of(ctx))
            answer = await CronClient(target).call(message)
        except (ValueError, LookupError) as error:
            return ToolOutcome.error(f"cronjob {action}: {error}", reason="refused")
        except (ActorExited, trio.TooSlowError) as error:
            return ToolOutcome.error(f"cronjob {action}: the scheduler did not answer ({error})")
        return ToolOutcome.ok(render(action, answer), action=action)

    def _request(self, action: str, args: Mapping[str, Any], origin: str | None) -> Any:
        fields = {key: args[key] for key in FIELDS if key in args}
        if "deliver" in fields:
            fields["deliver"] = self._target(fields["deliver"], origin)
        if "toolsets" in fields:
            self._check_toolsets(fields["toolsets"])
        if action == "create":
            if "deliver" not in fields and origin is not None:
                fields["deliver"] = f"session:{origin}"
            return AddJob(fields, origin=origin)
        if action == "list":
            return ListJobs()
        job = args.get("job")
        if not isinstance(job, str) or not job:
            raise ValueError(f"action {action!r} needs the job's id (job)")
        if action == "edit":
            if not fields:
                raise ValueError(f"edit needs a field to change ({', '.join(FIELDS)})")
            return EditJob(job, fields)
        simple = {"get": GetJob, "pause": PauseJob, "resume": ResumeJob, "run": RunJob}
        if action in simple:
            return simple[action](job)
        if action == "remove":
            return RemoveJob(job)
        return JobRuns(job, int(args.get("limit", 10)))

    @staticmethod
    def _target(value: object, origin: str | None) -> str:
        if value == "origin":
            if origin is None:
                raise ValueError("deliver 'origin' needs a session, and this call has none")
            return f"session:{origin}"
        try:
            target = parse_target(value)
        except DeliveryError as error:
            raise ValueError(f"{error}; from here use 'origin' or 'events'") from None
        if target.kind == "events" or (target.kind == "session" and target.value == origin):
            return str(value)
        raise ValueError(
            f"deliver {value!r} is for a person to set (hermes cron edit JOB --deliver ...): "
            "a job scheduled here delivers to this session ('origin') or to 'events'"
        )

    def _check_toolsets(self, toolsets: object) -> None:
        if self.registry is None or not isinstance(toolsets, list):
            return
        known = {t.name for t in self.registry} | {t.toolset for t in self.registry}
        unknown = [name for name in toolsets if name not in known]
        if unknown:
            raise ValueError(
                f"toolsets: {unknown[0]!r} is no tool or toolset here "
                f"(toolsets: {', '.join(sorted({t.toolset for t in self.registry}))})"
            )


def render(action: str, answer: Any) -> str:
    """The scheduler's answer as the model reads it."""
    if action == "list":
        if not answer:
            return "No scheduled jobs."
        return "\n".join(_line(job) for job in answer)
    if action == "runs":
        if not answer:
            return "No runs yet."
        return "\n".join(
            f"- {run['outcome']} after {run['finished_at'] - run['started_at']:.1f}s"
            f"{' (' + run['delivery'] + ')' if run.get('delivery') else ''}: "
            f"{(run['detail'] or '').strip()[:300]}"
            for run in answer
        )
    if action == "remove":
        return f"Removed {answer['removed']}" + (
            " (its running run was cancelled)." if answer.get("run_cancelled") else "."
        )
    return f"{action}: {_line(answer)}"


def _line(job: Mapping[str, Any]) -> str:
    state = "running" if job.get("running") else job["state"]
    extra = f", delivers to {job['deliver']}" if job.get("deliver") else ""
    last = f", last run {job['last_outcome']}" if job.get("last_outcome") else ""
    return f"{job['id']} [{state}] {job['schedule']!r} ({job['tz']}): {job['name']}{extra}{last}"


__all__ = ["ACTIONS", "CronjobTool", "SchedulerRef", "render", "session_of"]
