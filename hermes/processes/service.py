"""``ProcessService``: typed calls to a session's process registry, each with a timeout.

This is what tools get from their context (``ctx.service(ProcessService)``).
Queries go to the registry; kill and stdin requests are routed to the
process's watcher (the registry names it, then the watcher is called
directly, so the registry never waits on a kill). Every failure is a
``ProcessError`` whose text is fit for the model; a registry that does not
answer is ``ProcessServiceUnavailable``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import trio

from actors import ActorExited, Call, CallTarget, CallTimeout, MailboxFull
from hermes.bell import Bell, cancelled_by
from hermes.procgroup import Handover

from .config import ProcessConfig
from .errors import ProcessError, ProcessNotRunning, ProcessServiceUnavailable
from .handoff import HandOff, HandoffTarget, TakeForeground, Ticket
from .messages import (
    CloseStdin,
    Kill,
    ListAll,
    Log,
    Note,
    Poll,
    Route,
    Routed,
    Start,
    StartSpec,
    Wait,
    Write,
)
from .state import LogResult, PollResult, ProcessInfo, WaitOutcome, WaitResult

WAIT_MARGIN = 5.0
"""Seconds a wait call may take beyond its own timeout before the call gives up."""


T = TypeVar("T")


class ProcessService:
    """A session's background processes, as tools use them.

    ``timeout`` is the default of every call; ``start`` and ``kill`` default to
    longer bounds derived from ``config`` (a start checkpoints to the store, a
    kill may need the whole SIGTERM-grace-SIGKILL ladder).
    """

    def __init__(
        self,
        registry: CallTarget,
        *,
        timeout: float = 5.0,
        config: ProcessConfig | None = None,
        handoff: HandoffTarget | None = None,
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.registry = registry
        self.timeout = float(timeout)
        self.config = config or ProcessConfig()
        self.handoff_target = handoff
        """The parent session, in a subagent's session (None: nothing to hand over to)."""

    @property
    def start_timeout(self) -> float:
        return self.timeout + self.config.store_timeout + 5.0

    @property
    def kill_timeout(self) -> float:
        c = self.config
        return c.kill_grace + 2 * c.kill_wait + c.drain_timeout + c.store_timeout + self.timeout

    async def _call(self, target: CallTarget, message: Call[T], timeout: float | None) -> T:
        limit = self.timeout if timeout is None else timeout
        try:
            return await target.call(message, timeout=limit)
        except CallTimeout as exc:
            raise ProcessServiceUnavailable(
                f"The process registry did not answer within {limit:g}s."
            ) from exc
        except ActorExited as exc:
            raise ProcessServiceUnavailable(
                f"The process registry is not running ({exc.reason.describe()})."
            ) from exc
        except MailboxFull as exc:
            raise ProcessServiceUnavailable(f"The process registry is overloaded: {exc}") from exc

    # -- start and queries ----------------------------------------------------------------

    async def start(
        self,
        command: str,
        *,
        cwd: str,
        env: Mapping[str, str],
        watch_patterns: tuple[str, ...] | list[str] = (),
        notify_on_complete: bool = False,
        close_stdin: bool = False,
        timeout: float | None = None,
    ) -> ProcessInfo:
        """Start ``command`` in the background; returns at once with its id and pid."""
        spec = StartSpec(
            command=command,
            cwd=str(cwd),
            env=dict(env),
            watch_patterns=tuple(watch_patterns),
            notify_on_complete=notify_on_complete,
            close_stdin=close_stdin,
        )
        return await self._call(
            self.registry, Start(spec), self.start_timeout if timeout is None else timeout
        )

    async def list(self, *, timeout: float | None = None) -> list[ProcessInfo]:
        """Every process the registry holds (running and recently finished), oldest first."""
        return await self._call(self.registry, ListAll(), timeout)

    async def poll(self, process_id: str, *, timeout: float | None = None) -> PollResult:
        """Status, exit code and the last 1,000 characters of output."""
        return await self._call(self.registry, Poll(process_id), timeout)

    async def log(
        self,
        process_id: str,
        offset: int | None = None,
        limit: int | None = None,
        *,
        timeout: float | None = None,
    ) -> LogResult:
        """A page of output from absolute ``offset`` (the last ``limit`` characters if None)."""
        size = self.config.log_limit if limit is None else limit
        return await self._call(self.registry, Log(process_id, offset, size), timeout)

    async def note(
        self, process_id: str, text: str, *, timeout: float | None = None
    ) -> ProcessInfo:
        """Add ``text`` to the process's notes (once); returns its state."""
        return await self._call(self.registry, Note(process_id, text), timeout)

    async def wait(
        self,
        process_id: str,
        timeout: float,
        *,
        interrupt: Bell | None = None,
        redirect: Bell | None = None,
    ) -> WaitResult:
        """Wait for the process to finish, at most ``timeout`` seconds (capped at ``wait_max``).

        Returns early with ``WaitOutcome.INTERRUPTED`` when ``interrupt`` is set, and with
        ``WaitOutcome.REDIRECTED`` when ``redirect`` is (the process keeps running).
        """
        for event, outcome in (
            (interrupt, WaitOutcome.INTERRUPTED),
            (redirect, WaitOutcome.REDIRECTED),
        ):
            if event is not None and event.is_set():
                return await self._ended_early(process_id, outcome)
        bounded = min(max(timeout, 0.0), self.config.wait_max)
        result: WaitResult | None = None
        with cancelled_by(trio.CancelScope(), interrupt, redirect):  # a ring ends the wait
            result = await self._call(
                self.registry, Wait(process_id, bounded), bounded + WAIT_MARGIN
            )
        if result is not None:
            return result
        interrupted = interrupt is not None and interrupt.is_set()
        stopped_by = WaitOutcome.INTERRUPTED if interrupted else WaitOutcome.REDIRECTED
        return await self._ended_early(process_id, stopped_by)

    async def _ended_early(self, process_id: str, outcome: WaitOutcome) -> WaitResult:
        polled = await self.poll(process_id)
        return WaitResult(polled.info, polled.tail, outcome)

    # -- kill and stdin -------------------------------------------------------------------

    async def _route(self, process_id: str, timeout: float | None) -> Routed:
        return await self._call(self.registry, Route(process_id), timeout)

    async def kill(self, process_id: str, *, timeout: float | None = None) -> ProcessInfo:
        """SIGTERM the group, SIGKILL it after the grace, reap, verify; returns the final state.

        A process that has already finished is left alone and its state returned.
        """
        routed = await self._route(process_id, None)
        if routed.watcher is None:
            return routed.info
        limit = self.kill_timeout if timeout is None else timeout
        try:
            info = await routed.watcher.call(Kill(), timeout=limit)
        except ActorExited:
            return (await self.poll(process_id)).info  # it finished meanwhile
        except CallTimeout as exc:
            raise ProcessServiceUnavailable(
                f"Killing {process_id} did not finish within {limit:g}s."
            ) from exc
        return info

    async def _to_watcher(self, process_id: str, message: Call[T], timeout: float | None) -> T:
        routed = await self._route(process_id, timeout)
        if routed.watcher is None:
            raise ProcessNotRunning(
                f"Background process {process_id} has finished "
                f"({routed.info.status.value}); it takes no more input."
            )
        limit = self.timeout + self.config.write_timeout if timeout is None else timeout
        try:
            return await routed.watcher.call(message, timeout=limit)
        except ActorExited as exc:
            raise ProcessNotRunning(
                f"Background process {process_id} has finished; it takes no more input."
            ) from exc
        except CallTimeout as exc:
            raise ProcessServiceUnavailable(
                f"Background process {process_id}'s watcher did not answer within {limit:g}s."
            ) from exc

    async def handoff(self, process_id: str, *, timeout: float | None = None) -> ProcessInfo:
        """Give a running process to the parent session (subagents only); returns its state.

        After this the process belongs to the parent's registry: it survives this
        session's end, and this session can no longer reach it. On any failure it
        stays here (and dies with this session as usual).
        """
        target = self.handoff_target
        if target is None:
            raise ProcessError(
                "This session has no parent session to hand processes to (only a subagent "
                "can hand over). Nothing was done."
            )
        parent = target.processes
        routed = await self._route(process_id, timeout)
        if routed.watcher is None:
            raise ProcessNotRunning(
                f"Background process {process_id} has finished ({routed.info.status.value}); "
                "there is nothing to hand over."
            )
        adopt_timeout = parent.timeout + parent.config.store_timeout + 5.0
        limit = adopt_timeout + self.timeout if timeout is None else timeout
        request = HandOff(parent.registry, target.session_id, target.on_handed, adopt_timeout)
        try:
            info = await routed.watcher.call(request, timeout=limit)
        except ActorExited as exc:
            raise ProcessNotRunning(
                f"Background process {process_id} finished before it could be handed over."
            ) from exc
        except CallTimeout as exc:
            raise ProcessServiceUnavailable(
                f"Handing {process_id} over did not finish within {limit:g}s."
            ) from exc
        return info

    async def take_foreground(
        self,
        handover: Handover,
        *,
        command: str,
        cwd: str,
        env: Mapping[str, str],
        timeout: float | None = None,
    ) -> ProcessInfo:
        """Move a running foreground command into this registry (``yielded.py``).

        ``handover.taken`` says afterwards, whatever happened (an error, a
        cancellation), whether the registry owns the process now.
        """
        ticket = Ticket()
        message = TakeForeground(
            handover=handover, command=command, cwd=str(cwd), env=dict(env), ticket=ticket
        )
        try:
            return await self._call(
                self.registry, message, self.start_timeout if timeout is None else timeout
            )
        finally:
            handover.taken = not ticket.abort()

    async def write(self, process_id: str, data: str, *, timeout: float | None = None) -> int:
        """Write ``data`` (UTF-8) to the process's stdin; returns the bytes written."""
        if not isinstance(data, str):
            raise ProcessError(f"data must be a string, got {type(data).__name__}")
        return await self._to_watcher(process_id, Write(data.encode()), timeout)

    async def submit(self, process_id: str, data: str, *, timeout: float | None = None) -> int:
        """``write`` plus a newline (answering a prompt)."""
        return await self.write(process_id, data + "\n", timeout=timeout)

    async def close_stdin(self, process_id: str, *, timeout: float | None = None) -> ProcessInfo:
        """Close the process's stdin (it reads end-of-file)."""
        return await self._to_watcher(process_id, CloseStdin(), timeout)
