"""Errors of the process service: each says what failed and what to do instead."""

from __future__ import annotations


class ProcessError(Exception):
    """Base of every process-service error; ``str(error)`` is fit for the model."""


class ProcessNotFound(ProcessError):
    """No process with that id in this session (never started, or pruned)."""

    def __init__(self, process_id: str, known: tuple[str, ...] = ()) -> None:
        listed = ", ".join(known[-10:]) if known else "none"
        super().__init__(f"No background process {process_id!r} in this session (known: {listed}).")
        self.process_id = process_id


class TooManyProcesses(ProcessError):
    """The registry is full of running processes."""


class ProcessStartFailed(ProcessError):
    """The command could not be started (or its start could not be checkpointed)."""


class ProcessNotRunning(ProcessError):
    """A stdin operation on a process that has finished."""


class StdinClosed(ProcessError):
    """A write to a process whose stdin is closed (by request, by the process, or adopted)."""


class ProcessServiceUnavailable(ProcessError):
    """The registry did not answer: not running, overloaded, or out of time."""
