"""``cron.*``: scheduled jobs (``hermes/cron``), served by the daemon's ``cron/scheduler``.

``cron.add`` (``schedule``, ``prompt``; optional ``name``, ``tz``, ``cwd``,
``model``, ``toolsets``, ``overlap``, ``timeout``, ``script``, ``deliver``, ``paused``;
``script`` or ``deliver`` null in ``cron.edit`` removes it), ``cron.list``,
``cron.get``, ``cron.edit`` (``job`` and the fields to change), ``cron.pause``,
``cron.resume``, ``cron.run`` (now), ``cron.rm``, ``cron.runs`` (past runs,
newest first). ``estop.set`` / ``estop.clear`` / ``estop.status``: the
emergency stop (seed #218; ``hermes pause`` / ``hermes resume``): the
scheduler writes its file and cancels job runs, then the sessions manager
stops every background delegation (``StopDelegations``). A bad
schedule or field is ``invalid_params`` with the reason, an unknown job
``not_found``, a scheduler between restarts ``unavailable``.
"""

from __future__ import annotations

import math
from typing import Any

from actors import ActorSystem, Call
from hermes.cron import (
    AddJob,
    CronClient,
    EditJob,
    EmergencyStop,
    GetJob,
    JobError,
    JobNotFound,
    JobRuns,
    ListJobs,
    PauseJob,
    RemoveJob,
    ResumeJob,
    RunJob,
    ScheduleError,
)
from hermes.daemon.errors import NotFound, RequestError
from hermes.daemon.manager import ManagerClient, StopDelegations
from hermes.kanban import Wake

from .params import TITLE_LIMIT, Method, Params

CRON_CALL_TIMEOUT = 15.0


def _fields(p: Params) -> dict[str, Any]:
    """The job fields present in the params, each checked for its type."""
    fields: dict[str, Any] = {}
    for key in ("schedule", "tz", "cwd", "model", "script", "deliver"):
        value = p.opt_str(key)
        if value is not None:
            fields[key] = value
        elif key in ("script", "deliver") and key in p.params:
            fields[key] = None  # null: the job has none from now on
    title = p.opt_str("name", limit=TITLE_LIMIT)
    if title is not None:
        fields["name"] = title
    prompt = p.opt_prose("prompt")
    if prompt is not None:
        fields["prompt"] = prompt
    overlap = p.choice("overlap", ("skip", "queue", "cancel"))
    if overlap is not None:
        fields["overlap"] = overlap
    p.seen.add("timeout")
    timeout = p.params.get("timeout")
    if timeout is not None:
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not 0 <= timeout < math.inf
        ):
            raise RequestError(
                f"{p.method}: param 'timeout' must be seconds >= 0 (0: no limit), "
                f"got {timeout!r:.100}",
                "invalid_params",
            )
        fields["timeout"] = float(timeout)
    p.seen.add("toolsets")
    toolsets = p.params.get("toolsets")
    if toolsets is not None:
        if not isinstance(toolsets, list) or not all(
            isinstance(t, str) and 0 < len(t) <= 100 for t in toolsets
        ):
            raise RequestError(
                f"{p.method}: param 'toolsets' must be a list of names, got {toolsets!r:.100}",
                "invalid_params",
            )
        fields["toolsets"] = list(toolsets)
    return fields


def cron_methods(
    system: ActorSystem, root_path: str, manager: ManagerClient | None = None
) -> dict[str, Method]:
    """The ``cron.*`` and ``estop.*`` entries of the method table."""

    async def ask(message: Call[Any]) -> Any:
        ref = system.lookup(f"{root_path}/cron/scheduler")
        if ref is None:
            raise RequestError("the scheduler is not running (restarting?)", "unavailable")
        try:
            return await CronClient(ref).call(message, timeout=CRON_CALL_TIMEOUT)
        except (ScheduleError, JobError) as error:
            raise RequestError(f"{error}", "invalid_params") from None
        except JobNotFound as error:
            raise NotFound(str(error)) from None

    async def add(p: Params) -> Any:
        fields = _fields(p)
        paused = p.opt_bool("paused", False)
        p.done()
        for required in ("schedule", "prompt"):
            if required not in fields:
                raise RequestError(f"cron.add: param {required!r} is required", "invalid_params")
        return await ask(AddJob(fields, paused=paused))

    async def edit(p: Params) -> Any:
        job = p.text("job")
        fields = _fields(p)
        p.done()
        if not fields:
            raise RequestError("cron.edit: nothing to change", "invalid_params")
        return await ask(EditJob(job, fields))

    async def listed(p: Params) -> Any:
        p.done()
        return await ask(ListJobs())

    async def runs(p: Params) -> Any:
        job = p.text("job")
        limit = p.opt_int("limit", 20, 1, 1000)
        p.done()
        return await ask(JobRuns(job, limit or 20))

    def one(kind: type[Call[Any]]) -> Method:
        async def method(p: Params) -> Any:
            job = p.text("job")
            p.done()
            return await ask(kind(job))  # type: ignore[call-arg]

        return method

    def estop(on: bool | None) -> Method:
        async def method(p: Params) -> Any:
            p.done()
            answer = {**await ask(EmergencyStop(on)), "delegations_stopped": 0}
            if on and manager is not None:  # the file exists now: nothing new starts
                answer.update(await manager.call(StopDelegations()))
            board = system.lookup(f"{root_path}/kanban/board")
            if on is False and board is not None:  # the board dispatches again at once
                await board.cast(Wake())
            return answer

        return method

    return {
        "estop.set": estop(True),
        "estop.clear": estop(False),
        "estop.status": estop(None),
        "cron.add": add,
        "cron.list": listed,
        "cron.get": one(GetJob),
        "cron.edit": edit,
        "cron.pause": one(PauseJob),
        "cron.resume": one(ResumeJob),
        "cron.run": one(RunJob),
        "cron.rm": one(RemoveJob),
        "cron.runs": runs,
    }


__all__ = ["cron_methods", "cron_route"]


def cron_route(
    verb: str, rest: list[str], body: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """HTTP routes under ``/cron`` (``http_api.py``): ``GET /cron``, ``POST /cron`` (add),
    ``GET /cron/{job}``, ``GET /cron/{job}/runs``,
    ``POST /cron/{job}/{edit,pause,resume,run,rm}``."""
    if not rest:
        if verb == "GET":
            return "cron.list", {}
        return ("cron.add", body) if verb == "POST" else None
    job = rest[0]
    if len(rest) == 1 and verb == "GET":
        return "cron.get", {"job": job}
    if len(rest) == 2 and verb == "GET" and rest[1] == "runs":
        return "cron.runs", {"job": job}
    if len(rest) == 2 and verb == "POST" and rest[1] == "edit":
        return "cron.edit", {**body, "job": job}
    if len(rest) == 2 and verb == "POST" and rest[1] in ("pause", "resume", "run", "rm"):
        return f"cron.{rest[1]}", {"job": job}
    return None
