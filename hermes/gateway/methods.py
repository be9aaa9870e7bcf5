"""The method table shared by the WebSocket and HTTP surfaces.

Each method takes a params dict and returns plain data (via ``hermes.codec``)
or raises a ``RequestError`` with a wire code. Params are checked strictly:
wrong types and unknown names are ``invalid_params`` errors naming the param.
``events.subscribe`` lives in the connection (it needs the connection's
queues); everything else is here.
"""

from __future__ import annotations

import gc
import logging
import math
import os
import time
from collections.abc import Mapping
from typing import Any

import attrs
import trio

from actors import (
    ActorExited,
    ActorSystem,
    CallTimeout,
    ExitReason,
    MailboxFull,
    gc_pauses,
    trio_task_count,
)
from hermes import __version__, codec
from hermes.daemon.config import BUSY_MODES
from hermes.daemon.errors import NotFound, RequestError
from hermes.daemon.manager import (
    Close,
    Create,
    Entry,
    Get,
    ListAll,
    ManagerClient,
    Resume,
    Running,
    Status,
)
from hermes.daemon.settings import Settings
from hermes.daemon.workdir import PATH_LIMIT
from hermes.memory import MemoryStore
from hermes.processes import (
    ProcessError,
    ProcessInfo,
    ProcessNotFound,
    ProcessService,
    ProcessServiceUnavailable,
    kill_orphans,
    list_orphans,
)
from hermes.session import (
    InvalidInput,
    NoTurnRunning,
    QueueFull,
    SessionBusy,
    SessionClosed,
    SessionError,
    UnknownApproval,
)
from hermes.store import ProcessRecord, StoreClient, StoreError
from hermes.subagents import DelegationError, UnknownSubagent
from hermes.tools import ApprovalChoice

from .checkpoint_methods import checkpoint_methods
from .cron_methods import cron_methods
from .goal_methods import goal_methods
from .heap_methods import heap_methods
from .kanban_methods import kanban_methods
from .mcp_methods import mcp_methods
from .memory_methods import memory_methods
from .params import TITLE_LIMIT, Method, Params
from .skills_methods import skills_methods
from .spawn_methods import spawn_methods

log = logging.getLogger("hermes.gateway.methods")

PROCESS_LIST_TIMEOUT = 5.0
"""Bound on one session's registry answering ``process.list`` (across sessions: skipped)."""

_ERROR_CODES: tuple[tuple[type[Exception], str], ...] = (
    (UnknownSubagent, "unknown_subagent"),
    (DelegationError, "subagent_error"),
    (ProcessNotFound, "unknown_process"),
    (ProcessServiceUnavailable, "unavailable"),
    (ProcessError, "process_error"),
    (SessionBusy, "busy"),
    (QueueFull, "queue_full"),
    (NoTurnRunning, "no_turn"),
    (SessionClosed, "session_closed"),
    (UnknownApproval, "unknown_approval"),
    (InvalidInput, "invalid_params"),
    (SessionError, "session_error"),
    (StoreError, "store_error"),
    (CallTimeout, "timeout"),
    (MailboxFull, "overloaded"),
    (ActorExited, "unavailable"),
)


def error_code(error: Exception) -> str:
    if isinstance(error, RequestError):
        return error.code
    for kind, code in _ERROR_CODES:
        if isinstance(error, kind):
            return code
    return "internal"


@attrs.define
class Services:
    system: ActorSystem
    settings: Settings
    manager: ManagerClient
    store: StoreClient
    root_path: str
    memory: MemoryStore | None = None


class Methods:
    """``await methods.call(name, params)`` -> plain data, or ``RequestError``."""

    def __init__(self, services: Services) -> None:
        self.s = services
        self.table: dict[str, Method] = {
            "daemon.status": self.status,
            "daemon.stats": self.stats,
            "session.create": self.session_create,
            "session.list": self.session_list,
            "session.get": self.session_get,
            "session.resume": self.session_resume,
            "session.close": self.session_close,
            "prompt.submit": self.prompt_submit,
            "steer": self.steer,
            "redirect": self.redirect,
            "interrupt": self.interrupt,
            "cancel": self.cancel,
            "actor.cancel": self.actor_cancel,
            "tree.snapshot": self.tree_snapshot,
            "approval.respond": self.approval_respond,
            "search": self.search,
            "session.yolo": self.session_yolo,
            "orphans.list": self.orphans_list,
            "orphans.kill": self.orphans_kill,
            "subagent.list": self.subagent_list,
            "subagent.steer": self.subagent_steer,
            "subagent.stop": self.subagent_stop,
            "process.list": self.process_list,
            "process.kill": self.process_kill,
            "session.compress": self.session_compress,
            **memory_methods(services.memory),
            **checkpoint_methods(services.settings, self.entry),
            **heap_methods(),
            **cron_methods(services.system, services.root_path, services.manager),
            **goal_methods(self.entry),
            **kanban_methods(services.system, services.root_path),
            **mcp_methods(services.system, services.root_path, self.entry),
            **skills_methods(services.settings),
            **spawn_methods(services.manager),
        }

    @property
    def names(self) -> list[str]:
        return sorted([*self.table, "events.subscribe", "events.unsubscribe"])

    async def call(self, method: str, params: Mapping[str, Any]) -> Any:
        handler = self.table.get(method)
        if handler is None:
            raise RequestError(
                f"unknown method {method[:100]!r} (known: {', '.join(self.names)})",
                "unknown_method",
            )
        return await handler(Params(method, params))

    async def entry(self, p: Params) -> Entry:
        return await self.s.manager.lookup(p.text("session"))

    # -- methods -----------------------------------------------------------------------

    async def status(self, p: Params) -> Any:
        p.done()
        info = await self.s.manager.status()
        settings = self.s.settings
        return {
            "pid": os.getpid(),
            "version": __version__,
            "boot_id": settings.boot_id,
            "uptime": round(time.time() - settings.started_at, 3),
            **info,
        }

    async def stats(self, p: Params) -> Any:
        """The daemon process's resource counts, for soak runs and leak hunts, and the
        cyclic collector's pauses (``gc``: ``actors.GcPauses.snapshot``).

        ``collect``: run a full garbage collection first (cyclic garbage waiting for
        the next one is not a leak; a leak test measures what survives it).
        """
        collect = p.opt_bool("collect", False)
        p.done()
        collected = gc.collect() if collect else None
        info = await self.s.manager.call(Status())
        return {
            "pid": os.getpid(),
            "gc_collected": collected,
            **process_counts(),
            "trio_tasks": trio_task_count(),
            "actors": len(self.s.system.registry),
            "sessions_live": info["sessions_running"],
            "gc": gc_pauses().snapshot(),
        }

    async def session_create(self, p: Params) -> Any:
        create = Create(
            p.opt_str("title", limit=TITLE_LIMIT),
            p.opt_str("cwd", limit=PATH_LIMIT),
            p.choice("busy_mode", BUSY_MODES),
        )
        p.done()
        return codec.to_plain(await self.s.manager.call(create))

    async def session_list(self, p: Params) -> Any:
        limit = p.opt_int("limit", 50, 1, 1000)
        include = p.opt_bool("include_ended", True)
        p.done()
        assert limit is not None
        return codec.to_plain(await self.s.manager.call(ListAll(limit, include)))

    async def session_get(self, p: Params) -> Any:
        request = Get(p.text("session"))
        p.done()
        return codec.to_plain(await self.s.manager.call(request))

    async def session_resume(self, p: Params) -> Any:
        request = Resume(p.text("session"))
        p.done()
        return codec.to_plain(await self.s.manager.call(request))

    async def session_close(self, p: Params) -> Any:
        request = Close(p.text("session"), p.opt_prose("reason") or "closed by the user")
        p.done()
        return await self.s.manager.call(request)

    async def prompt_submit(self, p: Params) -> Any:
        text = p.prose("text")
        mode = p.choice("mode", BUSY_MODES)
        entry = await self.entry(p)
        p.done()
        return codec.to_plain(await entry.handle.prompt(text, mode=mode))

    async def steer(self, p: Params) -> Any:
        text = p.prose("text")
        entry = await self.entry(p)
        p.done()
        return codec.to_plain(await entry.handle.steer(text))

    async def redirect(self, p: Params) -> Any:
        text = p.prose("text")
        entry = await self.entry(p)
        p.done()
        return codec.to_plain(await entry.handle.redirect(text))

    async def interrupt(self, p: Params) -> Any:
        reason = p.opt_prose("reason") or "interrupted by the user"
        entry = await self.entry(p)
        p.done()
        if not (await entry.handle.state()).busy and not await _subagents_active(entry):
            raise NoTurnRunning(f"session {entry.session_id} is idle: nothing to interrupt")
        return codec.to_plain(await entry.handle.interrupt(reason))

    async def cancel(self, p: Params) -> Any:
        reason = p.opt_prose("reason") or "cancelled by the user"
        entry = await self.entry(p)
        p.done()
        cancelled = await entry.handle.cancel(reason)
        result = cancelled.result
        return {
            "cancelled": result is not None,
            "turn": result.turn if result is not None else None,
            "reason": result.reason.value if result is not None else None,
            "text": result.text if result is not None else None,
            "dropped": list(cancelled.dropped),
        }

    async def actor_cancel(self, p: Params) -> Any:
        path = p.text("path")
        p.done()
        root = self.s.root_path
        if path == root or not path.startswith(root + "/"):
            raise RequestError(
                f"actor.cancel: {path!r} is not an actor under {root} (the root itself "
                "is stopped with `hermes daemon stop`)",
                "invalid_params",
            )
        ref = self.s.system.lookup(path)
        if ref is None:
            raise NotFound(f"no live actor at {path!r}")
        reason = await ref.kill(ExitReason.cancelled(by="gateway", detail="actor.cancel"))
        return {"path": path, "reason": reason.describe()}

    async def tree_snapshot(self, p: Params) -> Any:
        p.done()
        return _finite(self.s.system.snapshot())

    async def approval_respond(self, p: Params) -> Any:
        request_id = p.opt_int("request_id", None)
        if request_id is None:
            raise RequestError("approval.respond: param 'request_id' is required", "invalid_params")
        choice = p.choice("choice", tuple(c.value for c in ApprovalChoice))
        if choice is None:
            raise RequestError("approval.respond: param 'choice' is required", "invalid_params")
        content = p.opt_object("content")
        entry = await self.entry(p)
        p.done()
        try:
            await entry.handle.respond_approval(request_id, choice, content)
        except UnknownApproval:
            first = entry.hub.resolved.get(request_id)
            if first is None:
                raise
            raise RequestError(
                f"approval request {request_id} of session {entry.session_id} was already "
                f"answered ({first}): the first answer wins",
                "already_answered",
            ) from None
        return {"request_id": request_id, "choice": choice}

    async def search(self, p: Params) -> Any:
        query = p.prose("query")
        limit = p.opt_int("limit", 20, 1, 200)
        session = p.opt_str("session")
        p.done()
        assert limit is not None
        hits = await self.s.store.search(query, limit=limit, session_id=session)
        return codec.to_plain(hits)

    # -- subagents and processes (through the owning session) -----------------------------

    async def subagent_list(self, p: Params) -> Any:
        entry = await self.entry(p)
        p.done()
        return codec.to_plain(list(await entry.handle.list_subagents()))

    async def subagent_steer(self, p: Params) -> Any:
        subagent = p.text("subagent")
        text = p.prose("text")
        entry = await self.entry(p)
        p.done()
        accepted = await entry.handle.steer_subagent(subagent, text)
        return {"subagent": subagent, **codec.to_plain(accepted)}

    async def subagent_stop(self, p: Params) -> Any:
        subagent = p.text("subagent")
        reason = p.opt_prose("reason") or "stopped by the user"
        entry = await self.entry(p)
        p.done()
        result = await entry.handle.stop_subagent(subagent, reason)
        return {"subagent": subagent, "result": codec.to_plain(result)}

    async def process_list(self, p: Params) -> Any:
        """One session's background processes, or those of every running session."""
        session = p.opt_str("session")
        p.done()
        if session is not None:
            entry = await self.s.manager.lookup(session)
            return [_process(info) for info in await _processes(entry).list()]
        entries = await self.s.manager.call(Running())
        rows: list[ProcessInfo] = []

        async def one(entry: Entry) -> None:
            if entry.processes is None:
                return
            try:
                rows.extend(await entry.processes.list(timeout=PROCESS_LIST_TIMEOUT))
            except ProcessError as exc:
                log.warning("process.list: session %s skipped: %s", entry.session_id, exc)

        async with trio.open_nursery() as nursery:
            for entry in entries:
                nursery.start_soon(one, entry)
        return [_process(info) for info in sorted(rows, key=lambda i: (i.started_at, i.id))]

    async def process_kill(self, p: Params) -> Any:
        process = p.text("process")
        entry = await self.entry(p)
        p.done()
        return _process(await _processes(entry).kill(process))

    async def session_compress(self, p: Params) -> Any:
        """Compact a session's transcript now (idle) or before its next step (busy)."""
        focus = p.opt_prose("focus")
        entry = await self.entry(p)
        p.done()
        return codec.to_plain(await entry.handle.compress(focus))

    async def session_yolo(self, p: Params) -> Any:
        """Skip a session's dangerous-command list (never the hardline floor), or stop skipping."""
        on = p.opt_bool("on", True)
        entry = await self.entry(p)
        p.done()
        return {"session": entry.session_id, "yolo": await entry.handle.set_yolo(on)}

    async def orphans_list(self, p: Params) -> Any:
        """Background processes whose daemon died (see ``hermes.processes.orphans``)."""
        p.done()
        orphans = await list_orphans(self.s.store)
        return [_orphan(o.record, o.liveness.value) for o in orphans]

    async def orphans_kill(self, p: Params) -> Any:
        ids = p.opt_str("process")
        p.done()
        outcomes = await kill_orphans(self.s.store, None if ids is None else {ids})
        return [{**_orphan(o.record, None), "action": o.action} for o in outcomes]


async def _subagents_active(entry: Entry) -> bool:
    """Whether any of the session's subagents is queued or running (background ones)."""
    try:
        rows = await entry.handle.list_subagents()
    except InvalidInput:  # this session hosts no subagents
        return False
    return any(row.state in ("queued", "running") for row in rows)


def _processes(entry: Entry) -> ProcessService:
    if entry.processes is None:
        raise ProcessServiceUnavailable(
            f"session {entry.session_id} has no running process registry (restarting?)"
        )
    return entry.processes


def _process(info: ProcessInfo) -> dict[str, Any]:
    out: dict[str, Any] = codec.to_plain(info)
    out["session"] = out.pop("session_id")
    return out


def _orphan(record: ProcessRecord, liveness: str | None) -> dict[str, Any]:
    out = {
        "id": record.id,
        "session": record.session_id,
        "command": record.command,
        "pid": record.pid,
        "pgid": record.pgid,
        "owner_pid": record.owner_pid,
        "started_at": record.started_at,
    }
    if liveness is not None:
        out["liveness"] = liveness
    return out


def _finite(value: Any) -> Any:
    """Snapshots may hold ``inf`` budgets; JSON has no infinity."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def process_counts() -> dict[str, int]:
    """This process's resident memory, open file descriptors and OS threads (``/proc``)."""
    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/statm") as statm:
        rss_pages = int(statm.read().split()[1])
    threads = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                threads = int(line.split()[1])
    return {
        "rss_bytes": rss_pages * page,
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": threads,
    }
