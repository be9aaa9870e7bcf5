"""``SessionHandle``: typed calls to a session, refusals raised as exceptions.

Works with an ``ActorRef`` or a supervisor's ``ChildHandle`` (which follows
the session across restarts). ``start_session`` spawns one under any actor
or the system.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from actors import ActorContext, ActorExited, ActorSystem, Call, CallTarget
from hermes.goals import Command, GoalAnswer, GoalCall
from hermes.tools import ApprovalChoice

from .config import BusyMode, SessionConfig
from .deps import SessionDeps
from .errors import SessionClosed
from .events import EventHub, Subscriber
from .messages import (
    Accepted,
    Cancel,
    Close,
    Compress,
    GetHub,
    GetState,
    Interrupt,
    ListSubagents,
    Prompt,
    Redirect,
    Refused,
    RespondApproval,
    SessionState,
    SetMcpServer,
    SetYolo,
    Steer,
    SteerSubagent,
    StopSubagent,
)
from .outcome import TurnResult
from .session import Cancelled, SessionActor

DEFAULT_TIMEOUT = 10.0

T = TypeVar("T")


class SessionHandle:
    """Talk to one session. Every method has a timeout (seconds)."""

    def __init__(
        self, target: CallTarget, hub: EventHub, *, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.target = target
        self.hub = hub
        self.timeout = timeout

    @property
    def id(self) -> str:
        return self.hub.session_id

    async def _call(self, message: Call[T | Refused], timeout: float | None) -> T:
        """Call the session; a ``Refused`` answer is raised, anything else returned."""
        try:
            answer = await self.target.call(message, timeout=timeout or self.timeout)
        except ActorExited as exc:
            if exc.handled:
                raise  # the session died handling this very request: not a plain "closed"
            raise SessionClosed(
                f"session {self.id} is not running ({exc.reason.describe()})"
            ) from exc
        if isinstance(answer, Refused):
            raise answer.error
        return answer

    async def prompt(
        self, text: str, *, mode: BusyMode | str | None = None, timeout: float | None = None
    ) -> Accepted:
        """Submit a prompt; returns how it was taken (started, queued, steered...)."""
        busy = BusyMode(mode) if isinstance(mode, str) else mode
        answer = await self._call(Prompt(text, busy), timeout)
        assert isinstance(answer, Accepted), answer  # without ``wait`` it is answered at once
        return answer

    async def run(
        self, text: str, *, mode: BusyMode | str | None = None, timeout: float = 600.0
    ) -> TurnResult:
        """Submit a prompt and wait for the result of the turn that runs it."""
        busy = BusyMode(mode) if isinstance(mode, str) else mode
        answer = await self._call(Prompt(text, busy, wait=True), timeout)
        assert isinstance(answer, TurnResult), answer  # ``wait``: the turn's result
        return answer

    async def steer(self, text: str, *, timeout: float | None = None) -> Accepted:
        return await self._call(Steer(text), timeout)

    async def redirect(self, text: str, *, timeout: float | None = None) -> Accepted:
        return await self._call(Redirect(text), timeout)

    async def interrupt(
        self, reason: str = "interrupted by the user", *, timeout: float | None = None
    ) -> Accepted:
        return await self._call(Interrupt(reason), timeout)

    async def cancel(
        self, reason: str = "cancelled by the user", *, timeout: float | None = None
    ) -> Cancelled:
        """Hard-cancel the running turn; returns when the session is idle and persisted."""
        return await self._call(Cancel(reason), timeout)

    async def respond_approval(
        self,
        request_id: int,
        choice: ApprovalChoice | str,
        content: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Answer an approval request; ``content``: a form request's typed answer."""
        await self._call(RespondApproval(request_id, ApprovalChoice(choice), content), timeout)

    async def set_yolo(self, on: bool, *, timeout: float | None = None) -> bool:
        """Turn the session's yolo switch on or off; returns the new value."""
        return await self._call(SetYolo(on), timeout)

    async def set_mcp_server(
        self, server: str, on: bool, *, timeout: float | None = None
    ) -> tuple[str, ...]:
        """Turn MCP server ``server``'s tools on or off for this session; the servers now off."""
        return await self._call(SetMcpServer(server, on), timeout)

    async def compress(self, focus: str | None = None, *, timeout: float | None = None) -> Accepted:
        """Compact the transcript (``/compress``): now when idle, else before the next step."""
        return await self._call(Compress(focus), timeout)

    async def goal(self, command: Command, *, timeout: float | None = None) -> GoalAnswer:
        """Apply a goal or loop command (``hermes.goals``: ``SetGoal``, ``GoalVerb``...)."""
        return await self._call(GoalCall(command), timeout)

    async def state(self, *, timeout: float | None = None) -> SessionState:
        return await self._call(GetState(), timeout)

    async def close(self, reason: str = "closed", *, timeout: float | None = None) -> Cancelled:
        return await self._call(Close(reason), timeout)

    async def list_subagents(self, *, timeout: float | None = None) -> Any:
        """This session's subagents: running, queued and recently finished."""
        return await self._call(ListSubagents(), timeout)

    async def steer_subagent(
        self, subagent_id: str, text: str, *, timeout: float | None = None
    ) -> Accepted:
        """Steer one of this session's subagents (only its owner may: ids are per session)."""
        return await self._call(SteerSubagent(subagent_id, text), timeout)

    async def stop_subagent(
        self,
        subagent_id: str,
        reason: str = "stopped by its owner",
        *,
        timeout: float | None = None,
    ) -> Any:
        """Stop one subagent and its whole subtree; returns its result once it is gone."""
        return await self._call(StopSubagent(subagent_id, reason), timeout)

    @contextmanager
    def subscribe(self, capacity: int = 1000, *, approvals: bool = False) -> Iterator[Subscriber]:
        """The session's events while the block is open (see ``EventHub.subscribe``)."""
        with self.hub.subscribe(capacity, approvals=approvals) as sub:
            yield sub


async def start_session(
    spawner: ActorSystem | ActorContext,
    config: SessionConfig,
    deps: SessionDeps,
    *,
    session_id: str | None = None,
    name: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> SessionHandle:
    """Start a session (new, or resumed from the store when ``session_id`` exists)."""
    actor = SessionActor(config, deps, session_id)
    ref = await spawner.spawn(actor, name=name or f"session-{session_id or 'new'}")
    hub = await ref.call(GetHub(), timeout=timeout)
    return SessionHandle(ref, hub, timeout=timeout)
