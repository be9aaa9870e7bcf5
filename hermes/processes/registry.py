"""``ProcessRegistry``: one session's background processes, each under a watcher child.

The registry admits starts (at most ``max_processes``: the oldest finished
are pruned first; with that many running a start is refused), spawns a
``ProcessWatcher`` child per process, and answers list, poll, log and wait
from the processes' shared ``ProcessState`` at once, without asking the
watcher (so a query never waits behind a kill). Kill and stdin requests go to
the watcher itself: ``Route`` tells the caller which one.

Waits are deferred replies answered when the watcher reports the end, or by a
timer at the wait's timeout. Pattern hits and completions become
``ProcessNotice`` values that pass the registry-wide ``NoticeGate`` (breaker)
and the emergency stop's ``NoticeHold``, and go to the ``notify`` sink given
at construction.

Finished processes stay listed for ``finished_ttl`` (30 minutes). When the
registry stops (its session closed, the daemon shut down) its watchers are
stopped all at once, each killing its process group within its budget.
On start, with a store, it recovers its session's checkpoint (adopt or mark
lost; see ``checkpoint.py``); that and a subagent's hand-off are ``adoption.py``,
a foreground command moved here on a redirect ``yielded.py``.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import attrs
import trio

from actors import (
    Actor,
    ActorContext,
    ActorRef,
    ActorSystem,
    Exit,
    ExitReason,
    MailboxConfig,
    Overflow,
    StartFailed,
    Timer,
)
from hermes.store import StoreClient

from .adoption import recover, take_over
from .buffer import OutputBuffer
from .checkpoint import Checkpoint
from .config import ProcessConfig
from .errors import (
    ProcessError,
    ProcessNotFound,
    ProcessStartFailed,
    TooManyProcesses,
)
from .gate import NoticeGate
from .handoff import Adopt, HandoffTarget, TakeForeground
from .hold import HOLD_RECHECK, NoticeHold
from .messages import (
    Finished,
    ListAll,
    Log,
    Note,
    PatternHit,
    Poll,
    Route,
    Routed,
    Start,
    StartSpec,
    Wait,
)
from .notices import (
    NoticeSink,
    ProcessNotice,
    completion_notice,
    handed_over_notice,
    pattern_notice,
)
from .service import ProcessService
from .state import (
    LogResult,
    PollResult,
    ProcessInfo,
    ProcessState,
    ProcessStatus,
    WaitOutcome,
    WaitResult,
)
from .waits import WaitExpired, Waits
from .watcher import ProcessWatcher
from .watcher_base import WatcherBase
from .yielded import take_foreground

log = logging.getLogger(__name__)

MAX_PATTERNS = 32
"""``watch_patterns`` a start may carry."""


def new_process_id() -> str:
    return "proc_" + secrets.token_hex(6)


@attrs.frozen(slots=True)
class _BreakerRelease:
    pass


@attrs.frozen(slots=True)
class _Prune:
    pass


@attrs.frozen(slots=True)
class _HoldRecheck:
    pass


@attrs.define(slots=True, eq=False)
class _Entry:
    state: ProcessState
    watcher: ActorRef | None = None
    ended: bool = False
    """Its end was handled (waiters answered, notice sent)."""
    actor: WatcherBase | None = None
    """The watcher itself (it says whether it handed the process over)."""


class ProcessRegistry(Actor):
    """Owns one session's background processes (see the module docstring)."""

    trap_exits = True  # a crashed watcher is handled here, never propagated
    stop_children_concurrently = True  # every group gets its full kill ladder at once
    mailbox = MailboxConfig(capacity=1024, overflow=Overflow.BLOCK)
    shutdown_budget = 8.0  # > ProcessConfig().stop_budget; spawn_process_registry sets it

    def __init__(
        self,
        session_id: str,
        notify: NoticeSink,
        *,
        store: StoreClient | None = None,
        config: ProcessConfig | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"session_id must be a non-empty str, got {session_id!r}")
        self.session_id = session_id
        self.notify = notify
        self.config = config or ProcessConfig()
        self.checkpoint = (
            Checkpoint(store, session_id, timeout=self.config.store_timeout)
            if store is not None
            else None
        )
        self.gate = NoticeGate(session_id, self.config)
        self.entries: dict[str, _Entry] = {}
        self.delivered = 0
        """Notices handed to ``notify``."""
        self.notify_failures = 0
        self.handed: dict[str, str] = {}
        """Processes handed over to a parent session: id -> that session."""
        self.waits = Waits(self.config.poll_tail)
        self._release_timer: Timer | None = None
        self.hold = NoticeHold(session_id, self.config.estop)
        self._hold_timer: Timer | None = None

    # -- lifecycle ---------------------------------------------------------------------

    async def on_start(self) -> None:
        self.ctx.send_interval(self.config.prune_interval, _Prune())
        self._send(self.hold.release())  # held before a restart: out now, or looked at again
        if self.checkpoint is not None:  # a checkpoint's processes, adopted or marked lost
            found = await recover(self.ctx, self.session_id, self.checkpoint, self.config)
            for each in found:
                ended = each.watcher is None
                self.entries[each.state.id] = _Entry(each.state, each.watcher, ended=ended)

    async def on_stop(self, reason: ExitReason) -> None:
        # The watchers have stopped (and killed their groups): answer every waiter.
        for process_id in self.waits.waiting():
            entry = self.entries.get(process_id)
            if entry is not None:
                self.waits.resolve(entry.state)

    # -- the mailbox -------------------------------------------------------------------

    async def receive(self, message: Any) -> Any:
        try:
            return await self._handle(message)
        except ProcessError as exc:
            if self.ctx.handling_call:
                self.ctx.defer_reply().fail(exc)
            else:
                log.warning("process registry %s: %s", self.ctx.path, exc)
            return None

    async def _handle(self, message: Any) -> Any:
        now = trio.current_time()
        match message:
            case Start():
                return await self._start(message.spec)
            case Adopt():
                return await self._adopt(message)
            case TakeForeground():
                return await self._take_foreground(message)
            case ListAll():
                self._prune(now)
                return [entry.state.info(now) for entry in self.entries.values()]
            case Poll():
                state = self._get(message.process_id).state
                state.exit_seen |= state.finished
                return PollResult(state.info(now), state.buffer.tail(self.config.poll_tail))
            case Log():
                return self._log(message)
            case Wait():
                return self._wait(message)
            case Note():
                state = self._get(message.process_id).state
                state.note(message.text)
                return state.info(now)
            case Route():
                entry = self._get(message.process_id)
                alive = entry.watcher is not None and entry.watcher.is_alive
                watcher = entry.watcher if alive and not entry.state.finished else None
                return Routed(watcher, entry.state.info(now))
            case PatternHit():
                self._pattern_hit(message)
            case Finished():
                found = self.entries.get(message.process_id)
                if found is not None:
                    self._finished(found)
            case WaitExpired():
                found = self.entries.get(message.process_id)
                self.waits.expire(message, found.state if found is not None else None)
            case _BreakerRelease():
                self._release_timer = None
                self._release(now)
            case _Prune():
                self._prune(now)
            case _HoldRecheck():
                self._hold_timer = None
                self._send(self.hold.release())
            case Exit():
                self._watcher_exited(message.actor, message.reason)
            case _:
                raise ProcessError(f"the process registry does not handle {type(message).__name__}")
        return None

    def _get(self, process_id: str) -> _Entry:
        entry = self.entries.get(process_id)
        if entry is None:
            to = self.handed.get(process_id)
            if to is not None:
                raise ProcessError(
                    f"Background process {process_id} was handed over to session {to}; "
                    "this session no longer owns it."
                )
            raise ProcessNotFound(process_id, tuple(self.entries))
        return entry

    # -- start -------------------------------------------------------------------------

    async def _start(self, spec: StartSpec) -> ProcessInfo:
        config = self.config
        if not isinstance(spec.command, str) or not spec.command.strip():
            raise ProcessStartFailed("The command is empty. Nothing was run.")
        patterns = tuple(spec.watch_patterns)
        if len(patterns) > MAX_PATTERNS or not all(isinstance(p, str) and p for p in patterns):
            raise ProcessStartFailed(
                f"watch_patterns must be at most {MAX_PATTERNS} non-empty strings. Nothing was run."
            )
        self._prune(trio.current_time())
        self._make_room()
        process_id = new_process_id()
        state = ProcessState(
            id=process_id,
            session_id=self.session_id,
            command=spec.command,
            cwd=spec.cwd,
            buffer=OutputBuffer(config.buffer_chars),
            watch_patterns=patterns,
            notify_on_complete=spec.notify_on_complete,
        )
        watcher = ProcessWatcher(state, spec, config, self.checkpoint)
        try:
            ref = await self.ctx.spawn(
                watcher,
                name=process_id,
                shutdown=config.stop_budget,
                start_timeout=config.store_timeout + 5.0,
            )
        except StartFailed as exc:
            error = exc.reason.error
            if isinstance(error, ProcessError):
                raise error from exc
            if isinstance(error, OSError) and error.filename == spec.cwd:
                raise ProcessStartFailed(
                    f"{spec.cwd} is not a directory. Nothing was run."
                ) from exc
            why = f"{type(error).__name__}: {error}" if error else exc.reason.describe()
            raise ProcessStartFailed(
                f"Could not start {spec.command!r} ({why}). Nothing is running."
            ) from exc
        self.entries[process_id] = _Entry(state, ref, actor=watcher)
        return state.info()

    async def _adopt(self, message: Adopt) -> ProcessInfo:
        """A subagent's watcher hands us a running process (see ``handoff.py``)."""
        self._prune(trio.current_time())
        self._make_room()  # full: refused before the take, so the child keeps it
        state, ref, watcher = await take_over(
            self.ctx, message, self.session_id, self.entries, self.config, self.checkpoint
        )
        self.entries[state.id] = _Entry(state, ref, actor=watcher)
        info = state.info()
        self._emit(
            handed_over_notice(
                self.session_id, state.id, state.command, message.transfer.from_session
            )
        )
        if message.on_handed is not None:
            try:
                message.on_handed(info)
            except Exception:
                log.exception("process registry %s: the on_handed hook failed", self.ctx.path)
        return info

    async def _take_foreground(self, message: TakeForeground) -> ProcessInfo:
        """A foreground command moved here on a redirect (see ``yielded.py``)."""
        self._prune(trio.current_time())
        self._make_room()  # full: refused before the take (the tool stops the command)
        state, ref, watcher = await take_foreground(
            self.ctx, message, new_process_id(), self.session_id, self.config, self.checkpoint
        )
        self.entries[state.id] = _Entry(state, ref, actor=watcher)
        return state.info()

    def _make_room(self) -> None:
        limit = self.config.max_processes
        excess = len(self.entries) - limit + 1
        if excess <= 0:
            return
        finished = sorted(
            (e.state for e in self.entries.values() if e.state.finished),
            key=lambda s: s.finished_clock or 0.0,
        )
        if len(finished) < excess:
            running = len(self.entries) - len(finished)
            raise TooManyProcesses(
                f"{running} background processes are running in this session, the limit is "
                f"{limit}. Nothing was started: kill one you no longer need (process tool, "
                "action kill) and try again."
            )
        for state in finished[:excess]:
            self._forget(state.id)

    def _forget(self, process_id: str) -> None:
        self.entries.pop(process_id, None)
        self.waits.forget(process_id)

    def _prune(self, now: float) -> None:
        ttl = self.config.finished_ttl
        expired = [
            pid
            for pid, e in self.entries.items()
            if e.state.finished_clock is not None and now - e.state.finished_clock >= ttl
        ]
        for pid in expired:
            self._forget(pid)

    # -- queries -------------------------------------------------------------------------

    def _log(self, message: Log) -> LogResult:
        state = self._get(message.process_id).state
        limit = message.limit
        if message.offset is not None and message.offset < 0:
            raise ProcessError(f"offset must be >= 0, got {message.offset}")
        if limit < 1:
            raise ProcessError(f"limit must be >= 1, got {limit}")
        page = state.buffer.read(message.offset, min(limit, self.config.buffer_chars))
        if state.finished and not page.more:
            state.exit_seen = True
        return LogResult(state.info(), page)

    def _wait(self, message: Wait) -> WaitResult | None:
        state = self._get(message.process_id).state
        if state.finished:
            state.exit_seen = True
            return self.waits.result(state, WaitOutcome.FINISHED)
        timeout = min(max(float(message.timeout), 0.0), self.config.wait_max)
        if timeout <= 0:
            return self.waits.result(state, WaitOutcome.TIMEOUT)
        reply = self.ctx.defer_reply()
        self.waits.add(state.id, reply, lambda expired: self.ctx.send_after(timeout, expired))
        return None

    # -- ends and notices ------------------------------------------------------------------

    def _finished(self, entry: _Entry) -> None:
        """The process ended: answer its waiters, then the completion notice (once)."""
        entry.watcher = None
        if entry.ended:
            return
        entry.ended = True
        state = entry.state
        self.waits.resolve(state)
        if state.notify_on_complete and not state.exit_seen:
            info = state.info()
            self._deliver(
                completion_notice(
                    self.session_id,
                    state.id,
                    state.command,
                    state.status.value,
                    state.exit_code,
                    info.runtime,
                    state.buffer.tail(self.config.notice_tail),
                    info.note,
                )
            )

    def _watcher_exited(self, ref: ActorRef, reason: ExitReason) -> None:
        """A watcher exited (``Exit`` may overtake its ``Finished``: system lane first)."""
        for entry in self.entries.values():
            if entry.watcher is ref:
                state = entry.state
                to = entry.actor.handed_to if entry.actor is not None else None
                if to is not None:  # handed over: the process is the parent's now
                    self.waits.resolve(state)
                    self._forget(state.id)
                    self.handed[state.id] = to
                    return
                if not state.finished:  # it failed before recording an end
                    state.finish(ProcessStatus.LOST, None)
                    state.note(f"its watcher failed: {reason.describe()}")
                    log.error("process %s: watcher exited: %s", state.id, reason.describe())
                self._finished(entry)
                return

    def _pattern_hit(self, hit: PatternHit) -> None:
        entry = self.entries.get(hit.process_id)
        if entry is None:
            return
        self._deliver(
            pattern_notice(
                self.session_id,
                hit.process_id,
                entry.state.command,
                hit.lines,
                more=hit.more,
                suppressed=hit.suppressed,
                disabled=hit.disabled,
            )
        )

    def _deliver(self, notice: ProcessNotice) -> None:
        now = trio.current_time()
        for out in self.gate.offer(notice, now):
            self._emit(out)
        release_at = self.gate.release_at
        if release_at is not None and self._release_timer is None:
            self._release_timer = self.ctx.send_after(max(release_at - now, 0.0), _BreakerRelease())

    def _release(self, now: float) -> None:
        summary = self.gate.release(now)
        if summary is not None:
            self._emit(summary)
        elif self.gate.release_at is not None:  # the timer fired a hair early
            self._release_timer = self.ctx.send_after(
                max(self.gate.release_at - now, 0.0), _BreakerRelease()
            )

    def _emit(self, notice: ProcessNotice) -> None:
        self._send(self.hold.offer(notice))

    def _send(self, notices: list[ProcessNotice]) -> None:
        for notice in notices:
            self.delivered += 1
            try:
                self.notify(notice)
            except Exception:
                self.notify_failures += 1
                log.exception("process registry %s: the notify sink failed", self.ctx.path)
        if self.hold.holding and self._hold_timer is None:  # the emergency stop is on
            self._hold_timer = self.ctx.send_after(HOLD_RECHECK, _HoldRecheck())


async def spawn_process_registry(
    spawner: ActorSystem | ActorContext,
    session_id: str,
    notify: NoticeSink,
    *,
    store: StoreClient | None = None,
    config: ProcessConfig | None = None,
    name: str = "processes",
    timeout: float = 5.0,
    handoff: HandoffTarget | None = None,
) -> ProcessService:
    """Start a ``ProcessRegistry`` under ``spawner``; returns a ``ProcessService`` for it.

    ``handoff``: in a subagent's session, its parent (the ``process`` tool's
    ``handoff`` action moves a process there)."""
    config = config or ProcessConfig()
    registry = ProcessRegistry(session_id, notify, store=store, config=config)
    ref = await spawner.spawn(
        registry,
        name=name,
        shutdown=config.stop_budget + 2.0,
        start_timeout=max(timeout, 2 * config.store_timeout + 5.0),
    )
    return ProcessService(ref, timeout=timeout, config=config, handoff=handoff)
