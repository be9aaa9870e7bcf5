"""The sessions manager's protocol: its requests, its answers and ``ManagerClient``.

Records only; ``manager.py`` answers them (and names them again, so callers import
them from there). The emergency stop's and spawn pause's requests are ``estop.py``'s.
A request that fails is answered ``Failed``, raised in the caller by ``ManagerClient``.
"""

from __future__ import annotations

from typing import Any, TypeVar

import attrs

from actors import Call, CallTarget
from hermes.processes import ProcessService
from hermes.session import SessionHandle

from .hub import RecordingHub
from .sessions_view import SessionsView

T = TypeVar("T")

# -- requests ------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Create(Call["SessionView | Failed"]):
    title: str | None = None
    cwd: str | None = None
    busy_mode: str | None = None
    model: str | None = None
    """The session's model (None: the daemon's); a scheduled job's ``model``."""
    toolsets: tuple[str, ...] | None = None
    """Only these tools or toolsets (None: all); a name matching none is refused."""
    without: tuple[str, ...] = ()
    """Tools or toolsets left out (a scheduled job's: seed #118, ``job_tools.py``)."""
    context_files: bool | None = None
    """Read the project's context files (None: as configured)."""
    tools: tuple[Any, ...] = ()
    """Tools only this session has (a kanban worker's ``kanban_*``, ``hermes/kanban``)."""
    scheduled: bool = False
    """A run nobody watches (a cron job, a kanban worker): a looping turn is halted."""


@attrs.frozen(slots=True)
class ListAll(Call["list[SessionView] | Failed"]):
    limit: int = 50
    include_ended: bool = True


@attrs.frozen(slots=True)
class Get(Call["SessionView | Failed"]):
    session_id: str


@attrs.frozen(slots=True)
class Resume(Call["SessionView | Failed"]):
    session_id: str


@attrs.frozen(slots=True)
class Close(Call["dict[str, Any] | Failed"]):
    session_id: str
    reason: str = "closed by the user"


@attrs.frozen(slots=True)
class Lookup(Call["Entry | Failed"]):
    """Answered with an ``Entry`` (the session resumed if it was not running)."""

    session_id: str


@attrs.frozen(slots=True)
class Status(Call["dict[str, Any] | Failed"]):
    pass


@attrs.frozen(slots=True)
class Running(Call["list[Entry] | Failed"]):
    """Answered with an ``Entry`` per running session (none is resumed)."""


@attrs.frozen(slots=True)
class CancelAll(Call["dict[str, Any] | Failed"]):
    """The daemon's shutdown: refuse new sessions and resumes from now on, then
    cancel every running session's turn and subagents (concurrently) and wait
    until each is idle and persisted. Answered with how many sessions and turns
    were cancelled; ``Failed`` names the sessions that could not be."""

    reason: str = "the daemon is stopping"


@attrs.frozen(slots=True)
class Failed:
    error: Exception


# -- answers -------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Entry:
    session_id: str
    handle: SessionHandle
    hub: RecordingHub
    path: str
    processes: ProcessService | None = None
    """The session's background-process registry (its child ``processes``), if running."""


@attrs.frozen(slots=True)
class SessionView:
    """A session as the surfaces show it."""

    id: str
    title: str | None
    model: str
    created_at: float
    updated_at: float
    ended: bool
    end_reason: str | None
    messages: int
    running: bool
    busy: bool
    turn: int
    turn_path: str | None
    queued: int
    path: str | None
    input_tokens: int
    output_tokens: int
    context_tokens: int = 0
    """Prompt tokens of the context now (running sessions; 0 otherwise)."""
    context_percent: float = 0.0
    reviewing: bool = False
    """A background memory review is running."""
    cwd: str | None = None
    """The running session's working directory (None when it is not running)."""


class ManagerClient:
    """Typed calls to the manager; ``Failed`` answers are raised.

    With a ``view``, a running session is looked up without a call
    (``sessions_view.py``).
    """

    def __init__(
        self, ref: CallTarget, timeout: float = 30.0, view: SessionsView | None = None
    ) -> None:
        self.ref = ref
        self.timeout = timeout
        self.view = view

    async def call(self, message: Call[T | Failed], timeout: float | None = None) -> T:
        """Call the manager; a ``Failed`` answer is raised, anything else returned."""
        answer = await self.ref.call(message, timeout=timeout or self.timeout)
        if isinstance(answer, Failed):
            raise answer.error
        return answer

    async def status(self) -> dict[str, Any]:
        """The manager's status, read through the view when it is attached."""
        now = self.view.status() if self.view is not None else None
        if now is not None:
            return now  # no checkpoint: on a loaded loop each pass is milliseconds
        return await self.call(Status())

    async def lookup(self, session_id: str) -> Entry:
        running = self.view.running(session_id) if self.view is not None else None
        if running is not None:
            return running
        return await self.call(Lookup(session_id))
