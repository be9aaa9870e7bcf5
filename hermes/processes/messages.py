"""Mailbox messages of the registry and its watchers (frozen attrs, never serialized).

Calls to the registry come from ``ProcessService``; watchers tell their
registry about output matches and their end with casts. A watcher's own
children (its pump) feed it output and the exit status.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from actors import ActorRef, Call

from .state import LogResult, PollResult, ProcessInfo, WaitResult

# -- calls to the registry -------------------------------------------------------------


@attrs.frozen(slots=True, kw_only=True)
class StartSpec:
    """What to start: ``<shell> -c command`` in ``cwd`` with ``env``."""

    command: str
    cwd: str
    env: Mapping[str, str]
    watch_patterns: tuple[str, ...] = ()
    notify_on_complete: bool = False
    close_stdin: bool = False
    """Give the command an empty stdin (EOF at once), like a foreground command."""


@attrs.frozen(slots=True)
class Start(Call[ProcessInfo]):
    spec: StartSpec


@attrs.frozen(slots=True)
class ListAll(Call[list[ProcessInfo]]):
    pass


@attrs.frozen(slots=True)
class Poll(Call[PollResult]):
    process_id: str


@attrs.frozen(slots=True)
class Log(Call[LogResult]):
    process_id: str
    offset: int | None
    limit: int


@attrs.frozen(slots=True)
class Wait(Call[WaitResult]):
    process_id: str
    timeout: float


@attrs.frozen(slots=True)
class Note(Call[ProcessInfo]):
    """Add a note to a process's record (shown by ``poll`` and in its completion notice)."""

    process_id: str
    text: str


@attrs.frozen(slots=True)
class Route(Call["Routed"]):
    """Where to send a kill or stdin request: the process's watcher, if it still runs."""

    process_id: str


@attrs.frozen(slots=True)
class Routed:
    watcher: ActorRef | None
    """None once the process has finished."""
    info: ProcessInfo


# -- from watchers to the registry ------------------------------------------------------


@attrs.frozen(slots=True)
class PatternHit:
    process_id: str
    lines: tuple[str, ...]
    more: int
    """Matching lines of this burst left out of ``lines`` (size limits)."""
    suppressed: int
    """Bursts dropped by the rate limit since the previous notice."""
    disabled: str | None = None
    """Why watching stopped with this notice, if it did."""


@attrs.frozen(slots=True)
class Finished:
    process_id: str


# -- calls to a watcher ----------------------------------------------------------------


@attrs.frozen(slots=True)
class Kill(Call[ProcessInfo]):
    pass


@attrs.frozen(slots=True)
class Write(Call[int]):
    data: bytes


@attrs.frozen(slots=True)
class CloseStdin(Call[ProcessInfo]):
    pass


# -- a watcher's own traffic ------------------------------------------------------------


@attrs.frozen(slots=True)
class Output:
    data: bytes


@attrs.frozen(slots=True)
class OutputEnded:
    pass


@attrs.frozen(slots=True)
class Exited:
    returncode: int


@attrs.frozen(slots=True)
class DrainTimeout:
    pass


@attrs.frozen(slots=True)
class CheckAlive:
    pass
