"""Building and editing ``CronJob`` rows from what a surface sends, with precise errors."""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from hermes.store.cron_queries import OVERLAP_POLICIES, CronJob

from .delivery import DeliveryError, parse_target
from .scan import PromptRefused, scan_prompt
from .schedule import Schedule, ScheduleError, parse_schedule
from .script import ScriptError, check_script_path

DEFAULT_TIMEOUT = 600.0
"""Seconds of inactivity before a run is cut off (seed #186: HERMES_CRON_TIMEOUT's 600)."""
PROMPT_LIMIT = 100_000
NAME_LIMIT = 200
EDITABLE = (
    "name", "schedule", "tz", "prompt", "cwd", "model", "toolsets", "overlap", "timeout",
    "script", "deliver",
)  # fmt: skip
ENDPOINT_FIELDS = ("base_url", "provider", "api_key", "endpoint")
"""Refused by name (seed #143): a job runs on the daemon's own provider, so no job can send
its prompt, and the key that goes with it, to an endpoint of its choosing."""


class JobError(ValueError):
    """A job's field that cannot be used; the message names it."""


def new_id() -> str:
    return "job-" + secrets.token_hex(4)


def _text(name: str, value: object, limit: int, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise JobError(f"{name} must be a non-empty string, got {value!r}")
    if len(value) > limit:
        raise JobError(f"{name} is {len(value)} characters, more than {limit}")
    return value


def checked_prompt(prompt: object) -> str:
    """A prompt that passes the strict scan (seed #119: create, edit, run-now)."""
    text = _text("prompt", prompt, PROMPT_LIMIT)
    assert text is not None
    try:
        scan_prompt(text)
    except PromptRefused as refused:
        raise JobError(str(refused)) from None
    return text


def check_fields(fields: Mapping[str, Any], scripts: Path | None = None) -> dict[str, Any]:
    """Validate the editable fields present in ``fields`` (schedule excepted); ``scripts``
    is the folder every pre-run script must be in (None: no script allowed)."""
    endpoint = sorted(set(fields) & set(ENDPOINT_FIELDS))
    if endpoint:
        raise JobError(
            f"a job cannot set {endpoint[0]!r}: jobs run on the daemon's own provider "
            "(a custom endpoint could carry the prompt and the key elsewhere)"
        )
    unknown = sorted(set(fields) - set(EDITABLE))
    if unknown:
        raise JobError(f"unknown job field {unknown[0]!r} (fields: {', '.join(EDITABLE)})")
    out: dict[str, Any] = {}
    if "name" in fields:
        out["name"] = _text("name", fields["name"], NAME_LIMIT)
    if "prompt" in fields:
        out["prompt"] = checked_prompt(fields["prompt"])
    if "cwd" in fields:
        out["cwd"] = _text("cwd", fields["cwd"], 4096, optional=True)
    if "model" in fields:
        out["model"] = _text("model", fields["model"], NAME_LIMIT, optional=True)
    if "toolsets" in fields:
        toolsets = fields["toolsets"]
        if toolsets is not None:
            if not isinstance(toolsets, (list, tuple)) or not all(
                isinstance(t, str) and t.strip() for t in toolsets
            ):
                raise JobError(f"toolsets must be a list of names, got {toolsets!r}")
            toolsets = tuple(toolsets)
        out["toolsets"] = toolsets
    if "overlap" in fields:
        if fields["overlap"] not in OVERLAP_POLICIES:
            raise JobError(
                f"overlap must be one of {', '.join(OVERLAP_POLICIES)}, got {fields['overlap']!r}"
            )
        out["overlap"] = fields["overlap"]
    if "timeout" in fields:
        timeout = fields["timeout"]
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not 0 <= timeout < math.inf
        ):
            raise JobError(f"timeout must be seconds >= 0 (0: no limit), got {timeout!r}")
        out["timeout"] = float(timeout)
    if "script" in fields:
        try:
            out["script"] = (
                None if fields["script"] is None else check_script_path(fields["script"], scripts)
            )
        except ScriptError as error:
            raise JobError(str(error)) from None
    if "deliver" in fields:
        deliver = fields["deliver"]
        if deliver is not None:
            try:
                target = parse_target(deliver)
            except DeliveryError as error:
                raise JobError(str(error)) from None
            deliver = target.kind if not target.value else f"{target.kind}:{target.value}"
        out["deliver"] = deliver
    if "tz" in fields:
        out["tz"] = fields["tz"]
    if "schedule" in fields:
        out["schedule"] = fields["schedule"]
    return out


def new_job(
    fields: Mapping[str, Any],
    *,
    now: float,
    scripts: Path | None = None,
    origin: str | None = None,
) -> tuple[CronJob, Schedule]:
    """A new job from ``fields`` (``schedule`` and ``prompt`` required); ``origin`` is the
    session whose model asked for it (None: a person)."""
    for required in ("schedule", "prompt"):
        if required not in fields:
            raise JobError(f"a job needs a {required}")
    checked = check_fields(fields, scripts)
    schedule = parse_schedule(checked["schedule"], checked.get("tz", "UTC"), now=now)
    prompt = checked["prompt"]
    job = CronJob(
        id=new_id(),
        name=checked.get("name") or prompt.strip().splitlines()[0][:60],
        schedule=schedule.text,
        tz=schedule.tz,
        prompt=prompt,
        cwd=checked.get("cwd"),
        model=checked.get("model"),
        toolsets=checked.get("toolsets"),
        overlap=checked.get("overlap", "skip"),
        timeout=checked.get("timeout", DEFAULT_TIMEOUT),
        script=checked.get("script"),
        deliver=checked.get("deliver"),
        origin=origin,
        created_at=now,
        updated_at=now,
    )
    return job, schedule


def edited(
    job: CronJob, fields: Mapping[str, Any], *, now: float, scripts: Path | None = None
) -> tuple[CronJob, Schedule]:
    """``job`` with ``fields`` changed; a new schedule or zone is parsed again."""
    checked = check_fields(fields, scripts)
    again = "schedule" in checked
    schedule_text = checked.pop("schedule", job.schedule)
    tz = checked.pop("tz", job.tz)
    # a stored one-shot time is not refused for being past unless it is being set now
    schedule = parse_schedule(schedule_text, tz, now=now if again else 0.0)
    changed = attrs.evolve(job, **checked, schedule=schedule.text, tz=schedule.tz, updated_at=now)
    return changed, schedule


__all__ = ["JobError", "ScheduleError", "check_fields", "checked_prompt", "edited", "new_job"]
