"""The ``sessions`` manager: live sessions under a dynamic supervisor, one hub each.

    sessions            SessionsManager: create / list / get / resume / close, lookup by id
    |-- events          EventWriter: every session event to the store, in batches (eventlog.py)
    `-- sup             DynamicSupervisor (template: a session, transient)
        `-- session-<id>   SessionActor (restarted after a crash, resumed from the store)

The manager keeps a ``RecordingHub`` per session and hands the same hub to
every incarnation, so gateway subscribers survive session restarts and can
replay recent events. Lookups of a session that is not running (after a
daemon restart) resume it from the store; an unknown id is an
``UnknownSession`` error, a closed one ``SessionIsClosed`` until resumed.
Requests that fail come back as ``Failed`` values, raised in the caller by
``ManagerClient``: a bad request never crashes the manager. The requests, answers
and client are ``manager_api.py``'s; the emergency stop and spawn pause ``estop.py``'s.

Sessions may delegate: the manager holds the daemon's ``SubagentRuntime``
(the spawn gate shared by every session) and gives each session its host and
the ``delegate_task`` tool. An ``Entry`` also carries a ``ProcessService`` for
the session's process registry (``PROCESSES_PATH`` under it, looked up by path at
each lookup, so a restarted registry is found).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import attrs
import trio

from actors import Actor, ActorRef, ExitReason
from hermes.cron.tool import CronjobTool
from hermes.memory import MemoryTool
from hermes.model.recovery import RecoveryPolicy
from hermes.processes import ProcessService, sweep_leftovers
from hermes.session import (
    PROCESSES_PATH,
    BusyMode,
    SessionActor,
    SessionClosed,
    SessionConfig,
    SessionDeps,
    SessionError,
    SessionHandle,
)
from hermes.skills import SkillLibrary, SkillManageTool, SkillViewTool
from hermes.store import InvalidRequest, SessionInfo, SessionNotFound, StoreClient, StoreError
from hermes.store.event_queries import LastEventSeq
from hermes.subagents import SubagentRuntime, with_delegation
from hermes.tools import ToolRegistry
from supervisors import (
    ChildHandle,
    ChildSpec,
    ChildState,
    DynamicSupervisor,
    Restart,
    SupervisorClient,
)

from .allowlist import AllowlistFile
from .config import BUSY_MODES
from .errors import RequestError, SessionIsClosed, ShuttingDown, UnknownSession
from .estop import ESTOP_FILE, SpawnPause, StopDelegations, spawn_pause, stop_delegations
from .eventlog import STOP_FLUSH_TIMEOUT, EventLog, EventWriter
from .hub import RecordingHub, SessionEnded
from .job_tools import job_registry, with_tools
from .manager_api import (
    CancelAll,
    Close,
    Create,
    Entry,
    Failed,
    Get,
    ListAll,
    Lookup,
    ManagerClient,
    Resume,
    Running,
    SessionView,
    Status,
)
from .providers import GetProviders
from .session_settings import (
    compression_settings,
    goal_settings,
    memory_store,
    process_config,
    review_settings,
    stop_settings,
    subagent_config,
    tool_registry,
    tool_settings,
)
from .settings import Settings
from .workdir import resolve_cwd

__all__ = [  # the requests and answers are manager_api.py's and estop.py's, named here too
    "CancelAll",
    "Close",
    "Create",
    "Entry",
    "Failed",
    "Get",
    "ListAll",
    "Lookup",
    "ManagerClient",
    "Resume",
    "Running",
    "SessionView",
    "SessionsManager",
    "SpawnPause",
    "Status",
    "StopDelegations",
    "make_session",
]

log = logging.getLogger("hermes.daemon.sessions")

SESSION_SHUTDOWN = 15.0  # the session's own budget (12 s) plus margin


def make_session(
    config: SessionConfig, deps: SessionDeps, session_id: str, hub: RecordingHub
) -> SessionActor:
    return SessionActor(config, deps, session_id, hub)


@attrs.define(slots=True)
class _Live:
    child: ChildHandle | None
    hub: RecordingHub
    handle: SessionHandle | None
    path: str
    cwd: str | None = None

    @property
    def running(self) -> bool:
        return self.child is not None and self.child.state is not ChildState.STOPPED


class SessionsManager(Actor):
    """See the module docstring."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.live: dict[str, _Live] = {}
        self.stopping = False
        """Set by ``CancelAll``: no session starts from then on."""

    async def on_start(self) -> None:
        parent = self.ctx.parent
        assert parent is not None
        system = self.ctx.system
        store_ref = system.lookup(parent.path + "/store")
        providers_ref = system.lookup(parent.path + "/providers")
        if store_ref is None or providers_ref is None:
            raise RuntimeError("the store and providers must start before the sessions manager")
        self.store = StoreClient(store_ref, lane=self.settings.store_lane)
        self.providers = await providers_ref.call(GetProviders())
        data_dir = self.settings.config.data_dir(self.settings.paths)
        self.subagents = SubagentRuntime(
            subagent_config(self.settings.config), data_dir / ESTOP_FILE
        )
        self.process_config = attrs.evolve(
            process_config(self.settings.config), estop=data_dir / ESTOP_FILE
        )
        await sweep_leftovers(self.store, self.process_config)  # before any session resumes
        self.registry = with_delegation(tool_registry(self.settings.config))
        config = self.settings.config
        self.memory = memory_store(config, config.data_dir(self.settings.paths))
        self.allowlist = AllowlistFile(self.settings.paths.config_file)
        if self.memory is not None:
            self.registry.register(MemoryTool(self.memory.limits))
        if config.get("skills", "enabled"):  # the index in each prompt, skill_view to load one
            skills = SkillLibrary(
                config.data_dir(self.settings.paths) / "skills",
                trusted_projects=tuple(config.get("skills", "trusted_projects")),
                pinned=tuple(config.get("skills", "pinned")),
                write_approval=config.get("skills", "write_approval"),
            )
            self.registry.register(SkillViewTool(skills))
            self.registry.register(SkillManageTool(skills))
        scheduler = parent.path + "/cron/scheduler"  # cron starts later: looked up per call
        self.registry.register(CronjobTool(lambda: system.lookup(scheduler), self.registry))
        if config.mcp.enabled:  # before ``sup``: MCP servers stop after the sessions using them
            from hermes.mcp.sampling import Sampler  # the SDK loads only when used
            from hermes.mcp.server import McpOptions
            from hermes.mcp.supervisor import McpSupervisor

            sampler = Sampler(self.providers.client, self.providers.model)  # sessions' model
            options = McpOptions(data_dir=config.data_dir(self.settings.paths))  # OAuth tokens
            mcp = McpSupervisor(config.mcp, self.registry, sampler=sampler, options=options)
            await self.ctx.spawn(mcp, name="mcp", shutdown=30.0)
        self.event_log = EventLog(self.settings.config.get("gateway", "stored_events"))
        if self.event_log.enabled:  # before ``sup``: it stops after the sessions, writing theirs
            await self.ctx.spawn(
                EventWriter(self.event_log, self.store),
                name="events",
                shutdown=STOP_FLUSH_TIMEOUT + 1.0,
            )
        template = ChildSpec(
            "session", make_session, restart=Restart.TRANSIENT, shutdown=SESSION_SHUTDOWN
        )
        self.sup_ref: ActorRef = await self.ctx.spawn(
            DynamicSupervisor(template, intensity=10, period=10.0), name="sup", shutdown=60.0
        )
        self.sup = SupervisorClient(self.sup_ref, timeout=SESSION_SHUTDOWN + 5)
        self.settings.sessions_view.attach(self._running_entry, self._status)

    # -- helpers -----------------------------------------------------------------------

    def _session_config(
        self, title: str | None, cwd: str | None, busy: str | None
    ) -> SessionConfig:
        config = self.settings.config
        paths = self.settings.paths
        data_dir = config.data_dir(paths)
        if cwd is not None:
            work = resolve_cwd(cwd)
        elif config.get("session", "cwd"):
            work = resolve_cwd(config.get("session", "cwd"), "config [session] cwd")
        else:
            work = Path(os.getcwd())
        return SessionConfig(
            model=self.providers.model,
            cwd=work,
            spill_dir=data_dir / "spill",
            title=title,
            max_tokens=config.get("model", "max_tokens"),
            recovery=RecoveryPolicy(cycles=config.get("model", "auto_recovery_cycles")),
            max_iterations=config.get("session", "max_iterations"),
            busy_mode=BusyMode(busy or config.get("session", "busy_mode")),
            crossed_reply=config.get("session", "crossed_reply"),
            approval_timeout=config.get("session", "approval_timeout"),
            yolo=config.get("session", "yolo"),
            # the offline demo model cannot judge commands: the person answers
            approval_mode="manual" if self.providers.demo else config.get("approvals", "mode"),
            judge_model=config.get("approvals", "judge_model"),
            checkpoint_dir=data_dir / "checkpoints"
            if config.get("checkpoints", "enabled")
            else None,
            load_context_files=config.get("session", "load_context_files"),
            soul_file=data_dir / "SOUL.md",
            context_window=config.get("model", "context_window"),
            compression=compression_settings(config, self.providers.model),
            review=review_settings(config),
            goals=goal_settings(config, data_dir / ESTOP_FILE),  # the emergency stop's file
            stops=stop_settings(config),
            **tool_settings(config),
        )

    def _deps(self) -> SessionDeps:
        return SessionDeps(
            store=self.store,
            client=self.providers.client,
            registry=self.registry,
            processes=self.process_config,
            subagents=self.subagents.host(),
            memory=self.memory,
            allowlist_source=self.allowlist.current,
            save_always=self.allowlist.save,
        )

    def _status(self) -> dict[str, Any]:
        """The answer to ``Status`` (also read through the ``SessionsView``)."""
        return {
            "model": self.providers.model,
            "demo": self.providers.demo,
            "provider": self.providers.base_url,
            "sessions_running": sum(1 for live in self.live.values() if live.running),
            "subagents_paused": self.subagents.paused,
        }

    def _running_entry(self, session_id: str) -> Entry | None:
        """The entry of a running session, None for any other (``SessionsView``)."""
        live = self.live.get(session_id)
        if live is None or not live.running or live.handle is None:
            return None
        return self._entry(session_id, live)

    def _entry(self, session_id: str, live: _Live) -> Entry:
        """What callers need of a running session (the registry looked up by its path)."""
        assert live.handle is not None
        ref = self.ctx.system.lookup(f"{live.path}/{PROCESSES_PATH}")
        processes = ProcessService(ref, config=self.process_config) if ref is not None else None
        return Entry(session_id, live.handle, live.hub, live.path, processes)

    async def _start(
        self,
        session_id: str,
        config: SessionConfig,
        hub: RecordingHub | None,
        registry: ToolRegistry | None = None,
    ) -> _Live:
        if self.stopping:
            raise ShuttingDown(f"the daemon is shutting down: session {session_id} not started")
        if hub is None:
            ring = self.settings.config.get("gateway", "replay_events")
            base = await self._last_stored(session_id)
            sink = self.event_log.add if self.event_log.enabled else None
            hub = RecordingHub(session_id, ring, base, sink)
        name = f"session-{session_id}"
        deps = self._deps() if registry is None else attrs.evolve(self._deps(), registry=registry)
        child = await self.sup.start_child(None, config, deps, session_id, hub, name=name)
        assert child is not None
        path = f"{self.sup_ref.path}/{name}"
        live = _Live(child, hub, SessionHandle(child, hub), path, str(config.cwd))
        self.live[session_id] = live
        log.info("session %s started at %s", session_id, live.path)
        return live

    async def _last_stored(self, session_id: str) -> int:
        if not self.event_log.enabled:
            return 0
        try:
            last = await self.store.request(LastEventSeq(session_id), timeout=5.0)
        except StoreError as exc:
            log.warning("session %s: stored events unknown (%s); numbering from 0", session_id, exc)
            return 0
        return last

    async def _info(self, session_id: str) -> SessionInfo:
        if not isinstance(session_id, str) or not session_id:
            raise UnknownSession(f"no session with id {session_id!r}")
        try:
            return await self.store.get_session(session_id)
        except (SessionNotFound, InvalidRequest):
            raise UnknownSession(f"no session with id {session_id!r}") from None

    async def _ensure(self, session_id: str, *, reopen: bool = False) -> _Live:
        live = self.live.get(session_id)
        if live is not None and live.running:
            return live
        info = await self._info(session_id)
        if info.ended and not reopen:
            raise SessionIsClosed(
                f"session {session_id} is closed ({info.end_reason}); resume it to continue"
            )
        config = self._session_config(info.title, None, None)
        return await self._start(session_id, config, live.hub if live else None)

    async def _view(self, info: SessionInfo) -> SessionView:
        live = self.live.get(info.id)
        running = live is not None and live.running
        state = None
        if running and live is not None and live.handle is not None:
            try:
                state = await live.handle.state(timeout=2.0)
            except SessionError:
                running = False
        return SessionView(
            id=info.id,
            title=info.title,
            model=info.model,
            created_at=info.created_at,
            updated_at=info.updated_at,
            ended=info.ended,
            end_reason=info.end_reason,
            messages=info.message_count,
            running=running,
            busy=state.busy if state else False,
            turn=state.turn if state else 0,
            turn_path=state.turn_path if state else None,
            queued=state.queued if state else 0,
            path=live.path if running and live is not None else None,
            input_tokens=info.usage.input_tokens,
            output_tokens=info.usage.output_tokens,
            context_tokens=state.context_tokens if state else 0,
            context_percent=(
                round(100.0 * state.context_tokens / state.context_window, 1)
                if state and state.context_window
                else 0.0
            ),
            reviewing=state.reviewing if state else False,
            cwd=live.cwd if running and live is not None else None,
        )

    # -- the mailbox -------------------------------------------------------------------

    async def receive(self, message: object) -> object:
        """Every request's failure is that request's answer, never the manager's crash.

        The manager's own state changes only after the step that can fail (a
        session is recorded once it started), so an exception leaves it as it
        was; an unexpected one is logged with its traceback and answered too.
        """
        try:
            return await self._handle(message)
        except (RequestError, SessionError, StoreError) as error:
            return Failed(error)
        except Exception as error:
            log.error("the sessions manager failed a %s", type(message).__name__, exc_info=error)
            return Failed(error)

    async def _handle(self, message: object) -> object:
        match message:
            case Lookup(session_id=session_id):
                return self._entry(session_id, await self._ensure(session_id))
            case Running():
                return [
                    self._entry(session_id, live)
                    for session_id, live in self.live.items()
                    if live.running and live.handle is not None
                ]
            case CancelAll(reason=reason):
                return await self._cancel_all(reason)
            case Create():
                return await self._create(message)
            case ListAll(limit=limit, include_ended=include_ended):
                infos = await self.store.list_sessions(limit=limit, include_ended=include_ended)
                return [await self._view(info) for info in infos]
            case Get(session_id=session_id):
                return await self._view(await self._info(session_id))
            case Resume(session_id=session_id):
                await self._ensure(session_id, reopen=True)
                return await self._view(await self._info(session_id))
            case Close(session_id=session_id, reason=reason):
                return await self._close(session_id, reason)
            case Status():
                return self._status()
            case SpawnPause(paused=paused):
                return spawn_pause(self.subagents, paused)
            case StopDelegations():
                return await stop_delegations(self.subagents)
        raise RequestError(f"the sessions manager does not handle {type(message).__name__}")

    async def _create(self, message: Create) -> SessionView:
        if self.stopping:
            raise ShuttingDown("the daemon is shutting down: no new sessions")
        if message.busy_mode is not None and message.busy_mode not in BUSY_MODES:
            raise RequestError(
                f"busy_mode: expected one of {', '.join(BUSY_MODES)}, got {message.busy_mode!r}",
                "invalid_params",
            )
        config = self._session_config(message.title, message.cwd, message.busy_mode)
        if message.model is not None:
            config = attrs.evolve(config, model=message.model)
        if message.context_files is not None:
            config = attrs.evolve(config, load_context_files=message.context_files)
        if message.scheduled:
            config = attrs.evolve(config, scheduled=True)
        registry = None
        if message.toolsets is not None or message.without or message.tools:
            registry = job_registry(self.registry, message.toolsets, message.without)
            registry = with_tools(registry, message.tools)
        info = await self.store.create_session(model=config.model, title=message.title)
        try:
            await self._start(info.id, config, None, registry)
        except Exception as error:  # leave no session that looks alive but never ran
            await self.store.end_session(info.id, f"failed to start: {error}"[:500])
            raise
        return await self._view(await self.store.get_session(info.id))

    async def _close(self, session_id: str, reason: str) -> object:
        live = self.live.get(session_id)
        info = await self._info(session_id)
        if live is None or not live.running:
            if not info.ended:
                await self.store.end_session(session_id, reason)
            result = None
        else:
            assert live.handle is not None
            cancelled = await live.handle.close(reason, timeout=SESSION_SHUTDOWN)
            result = cancelled.result
        if live is not None:
            live.hub.publish(SessionEnded(reason))
            # Forget it: a closed session's hub (and its replay ring) must not pile up
            # in a daemon that runs for days. A resume starts a new hub whose seqs
            # continue from the stored events.
            self.live.pop(session_id, None)
        return {"closed": session_id, "turn_cancelled": result is not None}

    async def _cancel_all(self, reason: str) -> dict[str, Any]:
        self.stopping = True
        running = [(sid, live.handle) for sid, live in self.live.items() if live.running]
        failed: dict[str, str] = {}
        turns = 0

        async def cancel(session_id: str, handle: SessionHandle) -> None:
            nonlocal turns
            try:
                cancelled = await handle.cancel(reason, timeout=SESSION_SHUTDOWN)
            except SessionError as error:
                if not isinstance(error, SessionClosed):  # gone already: nothing to cancel
                    failed[session_id] = f"{type(error).__name__}: {error}"
            except Exception as error:
                failed[session_id] = f"{type(error).__name__}: {error}"
            else:
                turns += cancelled.result is not None

        async with trio.open_nursery() as nursery:
            for session_id, handle in running:
                if handle is not None:
                    nursery.start_soon(cancel, session_id, handle)
        if failed:
            listed = "; ".join(f"{sid}: {why}" for sid, why in sorted(failed.items()))
            raise RequestError(f"{len(failed)} of {len(running)} sessions not cancelled: {listed}")
        log.info("shutdown: %d turns of %d sessions cancelled", turns, len(running))
        return {"sessions": len(running), "turns_cancelled": turns}

    async def on_stop(self, reason: ExitReason) -> None:
        self.settings.sessions_view.detach(self._running_entry)
        log.info("sessions manager stopping: %s", reason.describe())
