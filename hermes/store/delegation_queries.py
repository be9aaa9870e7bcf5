"""The SQL of the ``delegations`` table: background delegations and their results.

Synchronous functions on an ``apsw.Connection``, run by ``queries.run_request``
in a transaction of their own, like every other request.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, cast

import apsw

from .errors import InvalidRequest, SessionNotFound
from .operations import Abort, operation
from .records import DelegationRecord, DelegationStatus
from .requests import (
    ListDelegations,
    RecordDelegationDelivered,
    RecordDelegationFinish,
    RecordDelegationStart,
)

MAX_DELEGATION_ROWS = 10_000
"""Most rows ``list_delegations`` returns."""

_COLUMNS = "id, session_id, goals, status, result, created_at, finished_at, delivered_at"


def _row(row: Sequence[Any]) -> DelegationRecord:
    return DelegationRecord(
        id=row[0],
        session_id=row[1],
        goals=row[2],
        status=cast(DelegationStatus, row[3]),
        result=row[4],
        created_at=float(row[5]),
        finished_at=None if row[6] is None else float(row[6]),
        delivered_at=None if row[7] is None else float(row[7]),
    )


def _check_str(op: str, field: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidRequest(op, f"{field} must be a non-empty str, got {value!r}")


def _existing(conn: apsw.Connection, op: str, delegation_id: object) -> DelegationRecord:
    _check_str(op, "delegation_id", delegation_id)
    row = conn.execute(f"SELECT {_COLUMNS} FROM delegations WHERE id = ?", (delegation_id,)).get
    if row is None:
        raise InvalidRequest(op, f"no delegation record with id {delegation_id!r}")
    return _row(cast(Sequence[Any], row))


@operation(RecordDelegationStart)
def record_delegation_start(
    conn: apsw.Connection, req: RecordDelegationStart, abort: Abort
) -> DelegationRecord:
    op = req.op
    _check_str(op, "delegation_id", req.delegation_id)
    _check_str(op, "session_id", req.session_id)
    if not isinstance(req.goals, str):
        raise InvalidRequest(op, f"goals must be a str, got {req.goals!r}")
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (req.session_id,)).get is None:
        raise SessionNotFound(
            op, f"no session with id {req.session_id!r}", session_id=req.session_id
        )
    if conn.execute("SELECT 1 FROM delegations WHERE id = ?", (req.delegation_id,)).get:
        raise InvalidRequest(op, f"a delegation with id {req.delegation_id!r} already exists")
    conn.execute(
        f"INSERT INTO delegations ({_COLUMNS}) VALUES (?, ?, ?, 'running', NULL, ?, NULL, NULL)",
        (req.delegation_id, req.session_id, req.goals, time.time()),
    )
    return _existing(conn, op, req.delegation_id)


@operation(RecordDelegationFinish)
def record_delegation_finish(
    conn: apsw.Connection, req: RecordDelegationFinish, abort: Abort
) -> DelegationRecord:
    op = req.op
    record = _existing(conn, op, req.delegation_id)
    if not isinstance(req.result, str):
        raise InvalidRequest(op, f"result must be a str, got {req.result!r}")
    if record.status != "running":
        return record  # the first finish wins (idempotent)
    conn.execute(
        "UPDATE delegations SET status = 'finished', result = ?, finished_at = ? WHERE id = ?",
        (req.result, time.time(), req.delegation_id),
    )
    return _existing(conn, op, req.delegation_id)


@operation(RecordDelegationDelivered)
def record_delegation_delivered(
    conn: apsw.Connection, req: RecordDelegationDelivered, abort: Abort
) -> DelegationRecord:
    op = req.op
    record = _existing(conn, op, req.delegation_id)
    if record.status == "running":
        raise InvalidRequest(op, f"delegation {req.delegation_id!r} has not finished")
    if record.status == "finished":
        conn.execute(
            "UPDATE delegations SET status = 'delivered', delivered_at = ? WHERE id = ?",
            (time.time(), req.delegation_id),
        )
    return _existing(conn, op, req.delegation_id)


@operation(ListDelegations)
def list_delegations(
    conn: apsw.Connection, req: ListDelegations, abort: Abort
) -> list[DelegationRecord]:
    op = req.op
    _check_str(op, "session_id", req.session_id)
    if type(req.limit) is not int or not 1 <= req.limit <= MAX_DELEGATION_ROWS:
        raise InvalidRequest(
            op, f"limit must be an int from 1 to {MAX_DELEGATION_ROWS}, got {req.limit!r}"
        )
    pending = "AND status != 'delivered' " if req.pending_only else ""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM delegations WHERE session_id = ? {pending}"
        "ORDER BY created_at, id LIMIT ?",
        (req.session_id, req.limit),
    )
    return [_row(row) for row in rows]
