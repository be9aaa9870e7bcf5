"""The last shutdown's report in the runtime directory (``shutdown.json``).

The daemon writes it as it stops (``write_report``); ``hermes daemon stop``
reads it (``last_report``) to say in one line what ran over. Light on purpose:
the CLI imports it without the runtime.
"""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING, Any

from hermes.files import replace_file
from hermes.paths import Paths

if TYPE_CHECKING:
    from supervisors import ShutdownReport

log = logging.getLogger("hermes.daemon")


def write_report(paths: Paths, report: ShutdownReport) -> None:
    """Keep ``report`` in the runtime directory (mode 0600) for ``hermes daemon stop``."""
    data = {
        "pid": os.getpid(),
        "summary": report.summary(),
        "clean": report.clean,
        "problems": [step.describe() for step in report.problems],
    }
    path = paths.shutdown_file
    try:
        replace_file(path, json.dumps(data), mode=0o600)
    except OSError as exc:
        log.warning("cannot write the shutdown report to %s: %s", path, exc)


def last_report(paths: Paths, pid: int) -> dict[str, Any] | None:
    """The report the daemon ``pid`` wrote as it stopped, or None."""
    try:
        data = json.loads(paths.shutdown_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("pid") != pid:
        return None
    return data


def stop_note(paths: Paths, pid: int) -> str | None:
    """The line ``hermes daemon stop`` adds when the daemon ``pid``'s shutdown had
    a step that ran over or failed (None when all was done in time, or no report)."""
    report = last_report(paths, pid)
    if report is None or report.get("clean", True):
        return None
    return f"hermes daemon: {report.get('summary')}"
