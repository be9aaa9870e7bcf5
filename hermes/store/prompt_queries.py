"""The ``session_prompts`` table: the system prompt a session last sent, and what it was for.

A resumed session sends its stored prompt again, byte for byte, while the
model and the working directory it was built for still match (seed #18), so
the provider's prompt cache survives a daemon restart. ``SavePrompt`` records
it (the blocks packed with ``hermes.codec``) with the tool list sent beside it
(JSON, in order, each definition as the wire has it), ``GetPrompt`` reads both
back. A row written before the tool list was recorded (migration 15) has none.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import apsw
import attrs

from hermes.codec import pack_blocks, unpack_blocks
from hermes.model.types import TextBlock, ToolSpec

from .errors import InvalidRequest
from .operations import Abort, operation
from .requests import Read, SideWrite
from .session_queries import session_row


@attrs.frozen(slots=True)
class StoredPrompt:
    """A session's recorded system prompt and the identity it was built for."""

    session_id: str
    model: str
    cwd: str
    blocks: tuple[TextBlock, ...]
    tools: tuple[ToolSpec, ...] | None = None
    """The tool list sent with it, in order (None: not recorded)."""


@attrs.frozen(slots=True)
class SavePrompt(SideWrite[None]):
    """Record the system prompt ``session_id`` sends (built for ``model`` in ``cwd``)."""

    op: ClassVar[str] = "save_prompt"

    session_id: str
    model: str
    cwd: str
    blocks: tuple[TextBlock, ...]
    tools: tuple[ToolSpec, ...] = ()
    """The tool list sent with the prompt, in order."""


@attrs.frozen(slots=True)
class GetPrompt(Read[StoredPrompt | None]):
    """The session's recorded system prompt (None when it has none)."""

    op: ClassVar[str] = "get_prompt"

    session_id: str


@operation(SavePrompt)
def save_prompt(conn: apsw.Connection, req: SavePrompt, abort: Abort) -> None:
    session_row(conn, req.op, req.session_id)
    if not req.blocks or not all(isinstance(b, TextBlock) for b in req.blocks):
        raise InvalidRequest(req.op, "blocks must be one or more text blocks")
    if not req.model or not req.cwd:
        raise InvalidRequest(req.op, "model and cwd must not be empty")
    if not all(isinstance(t, ToolSpec) for t in req.tools):
        raise InvalidRequest(req.op, "tools must be tool specs")
    conn.execute(
        "INSERT INTO session_prompts (session_id, model, cwd, blocks, tools) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET model = excluded.model, cwd = excluded.cwd, "
        "blocks = excluded.blocks, tools = excluded.tools",
        (req.session_id, req.model, req.cwd, pack_blocks(req.blocks), _tools_text(req)),
    )


@operation(GetPrompt)
def get_prompt(conn: apsw.Connection, req: GetPrompt, abort: Abort) -> StoredPrompt | None:
    session_row(conn, req.op, req.session_id)
    row = conn.execute(
        "SELECT model, cwd, blocks, tools FROM session_prompts WHERE session_id = ?",
        (req.session_id,),
    ).fetchone()
    if row is None:
        return None
    model, cwd, data, tools = row
    blocks = tuple(b for b in unpack_blocks(bytes(data)) if isinstance(b, TextBlock))
    return StoredPrompt(req.session_id, str(model), str(cwd), blocks, _tools_of(tools))


def _tools_text(req: SavePrompt) -> str:
    """The tool list as JSON, each definition in the wire's field order."""
    try:
        return json.dumps(
            [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in req.tools
            ],
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError) as error:
        raise InvalidRequest(req.op, f"tools must be JSON data: {error}") from None


def _tools_of(text: Any) -> tuple[ToolSpec, ...] | None:
    """The stored tool list (None: none recorded, or not one this build can read)."""
    if text is None:
        return None
    try:
        items = json.loads(str(text))
        return tuple(
            ToolSpec(str(i["name"]), str(i["description"]), dict(i["input_schema"])) for i in items
        )
    except (ValueError, TypeError, KeyError):
        return None
