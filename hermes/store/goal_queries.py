"""The ``session_goals`` table: a session's standing goal and loop, kept across restarts.

One row per session holding the goal keeper's state as a JSON text
(``hermes.goals.persist``): ``SaveGoals`` writes it (``None`` deletes the row),
``LoadGoals`` reads it back when the session starts (issue 27, item 5).
"""

from __future__ import annotations

import json
from typing import ClassVar

import apsw
import attrs

from .errors import InvalidRequest
from .operations import Abort, operation
from .requests import Read, SideWrite
from .session_queries import session_row

STATE_LIMIT = 1 << 20
"""Most characters of one session's stored goal state."""


@attrs.frozen(slots=True)
class SaveGoals(SideWrite[None]):
    """Record the session's goal state (a JSON object), or forget it (``None``)."""

    op: ClassVar[str] = "save_goals"

    session_id: str
    state: str | None


@attrs.frozen(slots=True)
class LoadGoals(Read["str | None"]):
    """The session's recorded goal state (None when it has none)."""

    op: ClassVar[str] = "load_goals"

    session_id: str


@operation(SaveGoals)
def save_goals(conn: apsw.Connection, req: SaveGoals, abort: Abort) -> None:
    session_row(conn, req.op, req.session_id)
    if req.state is None:
        conn.execute("DELETE FROM session_goals WHERE session_id = ?", (req.session_id,))
        return
    if not isinstance(req.state, str) or len(req.state) > STATE_LIMIT:
        raise InvalidRequest(req.op, f"state must be a string of at most {STATE_LIMIT} chars")
    try:
        if not isinstance(json.loads(req.state), dict):
            raise ValueError("not an object")
    except ValueError as error:
        raise InvalidRequest(req.op, f"state must be a JSON object: {error}") from None
    conn.execute(
        "INSERT INTO session_goals (session_id, state) VALUES (?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET state = excluded.state",
        (req.session_id, req.state),
    )


@operation(LoadGoals)
def load_goals(conn: apsw.Connection, req: LoadGoals, abort: Abort) -> str | None:
    session_row(conn, req.op, req.session_id)
    row = conn.execute("SELECT state FROM session_goals WHERE session_id = ?", (req.session_id,))
    state = row.get  # one column of at most one row: the value, or None
    return str(state) if state is not None else None
