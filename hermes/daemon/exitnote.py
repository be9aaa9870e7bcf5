"""One line on stderr for a daemon that ends abnormally: which child, why, where the log is.

Two ways the tree ends without a signal: it fails to start (a child's start
hook raised: the database cannot be opened, the port is taken), or the root
supervisor gives up after too many restarts. ``StartWatch`` catches the first
from the application's log record. A supervisor that gives up exits
``shutdown`` (OTP) and names the failure that tripped it only in its
``Escalated`` event and log record: ``GiveUpWatch`` keeps that record, and
``describe_exit`` reads it for the root.
"""

from __future__ import annotations

import logging
from pathlib import Path

from actors import ExitReason, StartFailed
from supervisors import ChildStartFailed, Escalated, gave_up


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _why(reason: ExitReason) -> str:
    """The innermost cause of a failure, as one short phrase."""
    while reason.cause is not None and reason.error is None:
        reason = reason.cause
    error = reason.error
    while isinstance(error, (StartFailed, ChildStartFailed)):
        reason = error.reason
        error = reason.error
    if error is not None:
        return _first_line(f"{type(error).__name__}: {error}")
    return _first_line(reason.describe())


def _child(error: BaseException | None) -> str | None:
    names = []
    while isinstance(error, (StartFailed, ChildStartFailed)):
        if isinstance(error, ChildStartFailed):
            names.append(error.child_id)
        error = error.reason.error
    return "/".join(names) or None


class StartWatch(logging.Handler):
    """Attached to ``supervisors.application`` while the tree runs: keeps the start failure."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.failure: StartFailed | None = None

    def emit(self, record: logging.LogRecord) -> None:
        for arg in record.args if isinstance(record.args, tuple) else ():
            if isinstance(arg, StartFailed) and self.failure is None:
                self.failure = arg

    def describe(self, log_file: Path) -> str:
        failure = self.failure
        if failure is None:
            return f"hermes daemon: failed to start; see {log_file}"
        child = _child(failure.reason.error)
        who = f"the {child} child" if child else failure.path
        return (
            f"hermes daemon: failed to start: {who} could not start "
            f"({_why(failure.reason)}); see {log_file}"
        )


class GiveUpWatch(logging.Handler):
    """Attached to ``supervisors`` while the tree runs: keeps each supervisor's last
    ``Escalated`` (the failure that made it give up), by supervisor path."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.escalated: dict[str, Escalated] = {}

    def emit(self, record: logging.LogRecord) -> None:
        for arg in record.args if isinstance(record.args, tuple) else ():
            if isinstance(arg, Escalated):
                self.escalated[arg.supervisor] = arg


def describe_exit(
    reason: ExitReason | None, escalated: Escalated | None, log_file: Path
) -> str | None:
    """The line for a root that gave up (restart limit) or crashed; None for a clean stop.

    ``escalated`` is the root's own ``Escalated`` event, if it gave up.
    """
    if gave_up(reason):
        if escalated is None:
            return f"hermes daemon: stopped: the root supervisor gave up; see {log_file}"
        child = escalated.child_id
        times = sum(1 for cid, _ in escalated.history if cid == child)
        return (
            f"hermes daemon: stopped: the {child} child failed {times} time(s) within "
            f"{escalated.period:g}s (last: {_why(escalated.reason)}) and the root supervisor "
            f"gave up after {escalated.intensity} restarts; see {log_file}"
        )
    if reason is None or not reason.is_abnormal:
        return None
    return f"hermes daemon: stopped: {_why(reason)}; see {log_file}"
