"""The SQL of the ``processes`` table: the crash checkpoint of background processes
and of foreground tool commands' process groups (rows with a ``tool_use_id``).

Synchronous functions on an ``apsw.Connection``, run by ``queries.run_request``
in a transaction of their own, like every other request.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, cast

import apsw

from .errors import InvalidRequest
from .operations import Abort, operation
from .records import PROCESS_STATUSES, ProcessRecord, ProcessRecordStatus
from .requests import (
    ClaimProcess,
    ForgetProcess,
    ListProcesses,
    RecordProcessFinish,
    RecordProcessStart,
)

MAX_PROCESS_ROWS = 10_000
"""Most rows ``list_processes`` returns."""

_COLUMNS = (
    "id, session_id, command, cwd, pid, pgid, start_time, boot_id, owner_pid, "
    "owner_start_time, status, exit_code, started_at, finished_at, tool_use_id"
)


def _row(row: Sequence[Any]) -> ProcessRecord:
    return ProcessRecord(
        id=row[0],
        session_id=row[1],
        command=row[2],
        cwd=row[3],
        pid=int(row[4]),
        pgid=int(row[5]),
        start_time=int(row[6]),
        boot_id=row[7],
        owner_pid=int(row[8]),
        owner_start_time=int(row[9]),
        status=cast(ProcessRecordStatus, row[10]),
        exit_code=None if row[11] is None else int(row[11]),
        started_at=float(row[12]),
        finished_at=None if row[13] is None else float(row[13]),
        tool_use_id=row[14],
    )


def _find(conn: apsw.Connection, process_id: str) -> ProcessRecord | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM processes WHERE id = ?", (process_id,)).get
    return None if row is None else _row(cast(Sequence[Any], row))


def _existing(conn: apsw.Connection, op: str, process_id: object) -> ProcessRecord:
    if not isinstance(process_id, str) or not process_id:
        raise InvalidRequest(op, f"process_id must be a non-empty str, got {process_id!r}")
    record = _find(conn, process_id)
    if record is None:
        raise InvalidRequest(op, f"no process record with id {process_id!r}")
    return record


def _check_int(op: str, field: str, value: object, minimum: int) -> None:
    if type(value) is not int or value < minimum:
        raise InvalidRequest(op, f"{field} must be an int >= {minimum}, got {value!r}")


@operation(RecordProcessStart)
def record_process_start(
    conn: apsw.Connection, req: RecordProcessStart, abort: Abort
) -> ProcessRecord:
    op, rec = req.op, req.record
    if not isinstance(rec, ProcessRecord):
        raise InvalidRequest(op, f"record must be a ProcessRecord, got {type(rec).__name__}")
    for field in ("id", "session_id", "boot_id"):
        value = getattr(rec, field)
        if not isinstance(value, str) or not value:
            raise InvalidRequest(op, f"{field} must be a non-empty str, got {value!r}")
    for field in ("pid", "pgid", "owner_pid"):
        _check_int(op, field, getattr(rec, field), 1)
    for field in ("start_time", "owner_start_time"):
        _check_int(op, field, getattr(rec, field), 0)
    if rec.tool_use_id is not None and (
        not isinstance(rec.tool_use_id, str) or not rec.tool_use_id
    ):
        raise InvalidRequest(
            op, f"tool_use_id must be None or a non-empty str, got {rec.tool_use_id!r}"
        )
    if rec.status != "running":
        raise InvalidRequest(op, f"a new process record must be 'running', got {rec.status!r}")
    if _find(conn, rec.id) is not None:
        raise InvalidRequest(op, f"a process record with id {rec.id!r} already exists")
    conn.execute(
        f"INSERT INTO processes ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            rec.id,
            rec.session_id,
            rec.command,
            rec.cwd,
            rec.pid,
            rec.pgid,
            rec.start_time,
            rec.boot_id,
            rec.owner_pid,
            rec.owner_start_time,
            "running",
            None,
            rec.started_at or time.time(),
            None,
            rec.tool_use_id,
        ),
    )
    return _existing(conn, op, rec.id)


@operation(RecordProcessFinish)
def record_process_finish(
    conn: apsw.Connection, req: RecordProcessFinish, abort: Abort
) -> ProcessRecord:
    op = req.op
    if not isinstance(req.process_id, str) or not req.process_id:
        raise InvalidRequest(op, f"process_id must be a non-empty str, got {req.process_id!r}")
    if req.status not in PROCESS_STATUSES or req.status == "running":
        raise InvalidRequest(op, f"status must be 'exited', 'killed' or 'lost', got {req.status!r}")
    if req.exit_code is not None and type(req.exit_code) is not int:
        raise InvalidRequest(op, f"exit_code must be an int or None, got {req.exit_code!r}")
    # One statement in the usual case (a mass cancel finishes a hundred at once).
    row = conn.execute(
        f"UPDATE processes SET status = ?, exit_code = ?, finished_at = ? "
        f"WHERE id = ? AND status = 'running' RETURNING {_COLUMNS}",
        (req.status, req.exit_code, time.time(), req.process_id),
    ).get
    if row is not None:
        return _row(cast(Sequence[Any], row))
    return _existing(conn, op, req.process_id)  # already finished (the first finish wins)


@operation(ClaimProcess)
def claim_process(conn: apsw.Connection, req: ClaimProcess, abort: Abort) -> ProcessRecord:
    op = req.op
    record = _existing(conn, op, req.process_id)
    _check_int(op, "owner_pid", req.owner_pid, 1)
    _check_int(op, "owner_start_time", req.owner_start_time, 0)
    if req.session_id is not None and (not isinstance(req.session_id, str) or not req.session_id):
        raise InvalidRequest(op, f"session_id must be a non-empty str, got {req.session_id!r}")
    if not record.active:
        raise InvalidRequest(
            op, f"process {req.process_id!r} is recorded as {record.status}; cannot claim it"
        )
    conn.execute(
        "UPDATE processes SET owner_pid = ?, owner_start_time = ?, "
        "session_id = COALESCE(?, session_id) WHERE id = ?",
        (req.owner_pid, req.owner_start_time, req.session_id, req.process_id),
    )
    return _existing(conn, op, req.process_id)


@operation(ForgetProcess)
def forget_process(conn: apsw.Connection, req: ForgetProcess, abort: Abort) -> bool:
    """Delete the row; whether there was one."""
    if not isinstance(req.process_id, str) or not req.process_id:
        raise InvalidRequest(req.op, f"process_id must be a non-empty str, got {req.process_id!r}")
    row = conn.execute("DELETE FROM processes WHERE id = ? RETURNING id", (req.process_id,)).get
    return row is not None


@operation(ListProcesses)
def list_processes(conn: apsw.Connection, req: ListProcesses, abort: Abort) -> list[ProcessRecord]:
    op = req.op
    if type(req.limit) is not int or not 1 <= req.limit <= MAX_PROCESS_ROWS:
        raise InvalidRequest(
            op, f"limit must be an int from 1 to {MAX_PROCESS_ROWS}, got {req.limit!r}"
        )
    where: list[str] = []
    args: list[Any] = []
    if req.session_id is not None:
        where.append("session_id = ?")
        args.append(req.session_id)
    if req.active_only:
        where.append("status = 'running'")
    if req.foreground is not None:
        if type(req.foreground) is not bool:
            raise InvalidRequest(op, f"foreground must be a bool or None, got {req.foreground!r}")
        where.append(f"tool_use_id IS {'NOT ' if req.foreground else ''}NULL")
    clause = f"WHERE {' AND '.join(where)} " if where else ""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM processes {clause}ORDER BY started_at, id LIMIT ?",
        (*args, req.limit),
    )
    return [_row(row) for row in rows]
