"""Row helpers shared by the transcript queries: validate, encode and index messages.

Plain functions on an ``apsw.Connection`` inside a request's transaction
(``queries.run_request``).
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from hermes.codec import CodecError, pack_blocks
from hermes.model.types import Message, ToolResultBlock, ToolUseBlock

from .errors import InvalidRequest, InvalidTranscript
from .validate import Tail, TranscriptRuleError, advance


def check_messages(op: str, session_id: str, messages: Sequence[object]) -> None:
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise InvalidRequest(
                op,
                f"messages[{index}] is a {type(message).__name__}, not a Message",
                session_id=session_id,
            )


def validate_next(op: str, session_id: str, tail: Tail, message: Message) -> Tail:
    try:
        return advance(tail, message)
    except TranscriptRuleError as exc:
        raise InvalidTranscript(op, str(exc), session_id=session_id) from None


def encode_message(op: str, session_id: str, seq: int, message: Message) -> bytes:
    try:
        return pack_blocks(message.content)
    except CodecError as exc:
        raise InvalidRequest(
            op, f"message seq {seq} cannot be stored: {exc}", session_id=session_id
        ) from None


def check_new_tool_uses(
    op: str, session_id: str, messages: Sequence[Message], first_seq: int
) -> None:
    """Refuse a tool_use id used twice among ``messages`` (``record_tools`` refuses one
    that an earlier message of the session used: the primary key of ``tool_calls``)."""
    seen: dict[str, int] = {}
    for offset, message in enumerate(messages):
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                if block.id in seen and seen[block.id] != first_seq + offset:
                    raise InvalidTranscript(
                        op,
                        f"tool_use id {block.id!r} is used twice (seq {seen[block.id]} "
                        f"and {first_seq + offset})",
                        session_id=session_id,
                    )
                seen[block.id] = first_seq + offset


def record_tools(
    conn: apsw.Connection, op: str, session_id: str, seq: int, message: Message
) -> None:
    """Index the message's tool uses and results; a tool_use id the session already
    used is an ``InvalidTranscript`` (the request's transaction is then rolled back)."""
    for index, block in enumerate(message.content):
        if isinstance(block, ToolUseBlock):
            try:
                conn.execute(
                    "INSERT INTO tool_calls (session_id, tool_use_id, name, use_seq, block) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (session_id, block.id, block.name, seq, index),
                )
            except apsw.ConstraintError:
                used_at = conn.execute(
                    "SELECT use_seq FROM tool_calls WHERE session_id = ? AND tool_use_id = ?",
                    (session_id, block.id),
                ).get
                raise InvalidTranscript(
                    op,
                    f"message seq {seq}: tool_use id {block.id!r} was already used "
                    f"at seq {used_at}",
                    session_id=session_id,
                ) from None
        elif isinstance(block, ToolResultBlock):
            conn.execute(
                "UPDATE tool_calls SET result_seq = ?, is_error = ? "
                "WHERE session_id = ? AND tool_use_id = ?",
                (seq, int(block.is_error), session_id, block.tool_use_id),
            )
