"""A run's message: the unattended-run header, the pre-run script's output, the job's prompt.

Seed #45: a fixed header (the job, the run's time in the job's zone, and that
nobody is watching) comes first, then the script's output as context (or, when
the script failed, a *Script error* block for the model to report, #11), then
the stored prompt. The stored prompt passed the strict scan when it was set
(``scan.py``); the script's output arrives only now, from outside, so it gets
the loose scan at fire time (#119's second half): invisible characters are
stripped (and logged), then the threat scan the skills and context files use
(``hermes.skills.scan_text``); a dangerous verdict puts a ``[BLOCKED: ...]``
notice in place of the output, as for a context file, and the run goes on.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime
from zoneinfo import ZoneInfo

from hermes.skills import blocked_notice, scan_text
from hermes.store.cron_queries import CronJob

from .script import ScriptRun

log = logging.getLogger("hermes.cron")

_INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)


def header(job: CronJob, now: float) -> str:
    """The unattended-run header (seed #45)."""
    when = datetime.fromtimestamp(now, ZoneInfo(job.tz)).isoformat(timespec="seconds")
    return (
        f"[Scheduled job {job.name!r} ({job.id}), run at {when}. This run is unattended: "
        "nobody is watching to answer questions or approve commands. Do the task and end "
        "with your final answer, which is recorded as the run's result.]"
    )


def loose_scan(text: str, job_id: str) -> str:
    """``text`` with invisible characters stripped, or a BLOCKED notice if it is dangerous."""
    stripped = _INVISIBLE.sub("", text)
    if stripped != text:
        log.warning(
            "cron job %s: %d invisible characters stripped from the script's output",
            job_id,
            len(text) - len(stripped),
        )
    result = scan_text(stripped)
    if result.blocked:
        log.warning("cron job %s: script output blocked: %s", job_id, result.reason())
        return blocked_notice("the pre-run script's output", result)
    return stripped


def job_prompt(job: CronJob, now: float, script: ScriptRun | None = None) -> str:
    """The run's message (see the module docstring)."""
    parts = [header(job, now)]
    if script is not None:
        output = loose_scan(script.output, job.id) if script.output else ""
        if script.error is not None:
            parts.append(
                f"## Script error\n\nThe job's pre-run script {job.script!r} failed: "
                f"{script.error}. Report this in your answer.\n\n"
                f"Its output:\n```\n{output or '(none)'}\n```"
            )
        else:
            parts.append(f"## Output of the pre-run script {job.script!r}\n\n```\n{output}\n```")
    parts.append(job.prompt)
    return "\n\n".join(parts)


__all__ = ["header", "job_prompt", "loose_scan"]
