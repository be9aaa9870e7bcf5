"""The ``session_flags`` table: switches a person set on a session that outlive its actor.

Today one: ``yolo`` (``SetYolo``, ``GetYolo``), so a session's yolo switch
survives the session's restart and the daemon's (issue 26, seed #95). The
requests live here with their SQL (registered with ``operation``);
callers send them with ``StoreClient.request``.
"""

from __future__ import annotations

from typing import ClassVar

import apsw
import attrs

from .errors import InvalidRequest
from .operations import Abort, operation
from .requests import Read, SideWrite
from .session_queries import session_row


@attrs.frozen(slots=True)
class SetYolo(SideWrite[bool]):
    """Record the session's yolo switch; answers the value stored."""

    op: ClassVar[str] = "set_yolo"

    session_id: str
    on: bool


@attrs.frozen(slots=True)
class GetYolo(Read[bool]):
    """The session's recorded yolo switch (False when never set)."""

    op: ClassVar[str] = "get_yolo"

    session_id: str


@operation(SetYolo)
def set_yolo(conn: apsw.Connection, req: SetYolo, abort: Abort) -> bool:
    session_row(conn, req.op, req.session_id)
    if not isinstance(req.on, bool):
        raise InvalidRequest(req.op, f"on must be a bool, got {req.on!r}")
    conn.execute(
        "INSERT INTO session_flags (session_id, yolo) VALUES (?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET yolo = excluded.yolo",
        (req.session_id, int(req.on)),
    )
    return req.on


@operation(GetYolo)
def get_yolo(conn: apsw.Connection, req: GetYolo, abort: Abort) -> bool:
    session_row(conn, req.op, req.session_id)
    row = conn.execute("SELECT yolo FROM session_flags WHERE session_id = ?", (req.session_id,)).get
    return bool(row)
