"""A transcript's writer epoch: ``ClaimWriter``, and the check every transcript write makes.

The epoch is a column of the session's row (``sessions.writer``). Its owner
claims a new one when it opens the session and when it leaves a writer behind;
each write (append, replace_last, truncate, compact) that carries one is
refused with ``StaleWriter`` unless it is the current one, before anything
else is read or checked, in the write's own transaction.
"""

from __future__ import annotations

import apsw

from .errors import StaleWriter
from .operations import Abort, operation
from .requests import ClaimWriter
from .session_queries import check_id, open_session_row


@operation(ClaimWriter)
def claim_writer(conn: apsw.Connection, req: ClaimWriter, abort: Abort) -> int:
    check_id(req.op, "session_id", req.session_id)
    open_session_row(conn, req.op, req.session_id)
    conn.execute("UPDATE sessions SET writer = writer + 1 WHERE id = ?", (req.session_id,))
    epoch = conn.execute("SELECT writer FROM sessions WHERE id = ?", (req.session_id,)).get
    assert isinstance(epoch, int)
    return epoch


def check_writer(conn: apsw.Connection, op: str, session_id: str, writer: int | None) -> None:
    """Refuse a write under an epoch that is no longer the session's (None: unchecked)."""
    if writer is None:
        return
    current = conn.execute("SELECT writer FROM sessions WHERE id = ?", (session_id,)).get
    if current is not None and current != writer:
        raise StaleWriter(
            op,
            f"writer epoch {writer} is stale (the transcript's writer is now epoch {current}): "
            "its writer was left behind and may not write",
            session_id=session_id,
            writer=writer,
        )
