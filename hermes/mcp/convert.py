"""An MCP ``CallToolResult`` as a Hermes ``ToolOutcome``.

- text blocks are joined with newlines;
- an embedded text resource is its text under a ``[resource URI]`` line; a
  resource link is one line naming it;
- images, audio and binary resources are saved under the session's spill
  directory and the model is told the type, size and path (a tool result in
  this transcript carries text only);
- structured content is sent as JSON when the server gave no text;
- ``isError`` makes an error result;
- a result over ``SPILL_AT`` (50,000) characters is saved whole to the
  spill directory and replaced by a preview and the path, as
  ``hermes.tools.budget`` does for every tool at 100,000.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from pathlib import Path

import mcp_types as types
import trio

from hermes.tools import OutputBudget, ToolOutcome
from hermes.tools.budget import spill, spill_name

SPILL_AT = 50_000
"""MCP results spill at half the built-in tools' threshold (Hermes' rule)."""
BUDGET = OutputBudget(per_result=SPILL_AT)


async def to_outcome(
    result: types.CallToolResult, spill_dir: Path, call_id: str, tool: str
) -> ToolOutcome:
    """The outcome the model sees for ``result`` (blocking file writes run in a thread)."""
    parts: list[str] = []
    for index, block in enumerate(result.content):
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            kind = "image" if isinstance(block, types.ImageContent) else "audio"
            parts.append(
                await _save_blob(block.data, block.mime_type, kind, spill_dir, call_id, tool, index)
            )
        elif isinstance(block, types.EmbeddedResource):
            res = block.resource
            if isinstance(res, types.TextResourceContents):
                parts.append(f"[resource {res.uri}]\n{res.text}")
            else:
                mime = res.mime_type or "application/octet-stream"
                text = await _save_blob(res.blob, mime, "resource", spill_dir, call_id, tool, index)
                parts.append(f"{text} (resource {res.uri})")
        elif isinstance(block, types.ResourceLink):
            named = f" ({block.name})" if block.name else ""
            parts.append(f"[resource link: {block.uri}{named}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    text = "\n".join(parts)
    if not text:
        text = "(the tool failed, no message)" if result.is_error else "(no content)"
    spilled_to: str | None = None
    if len(text) > SPILL_AT:
        text, path = await trio.to_thread.run_sync(spill, text, spill_dir, call_id, tool, BUDGET)
        spilled_to = str(path) if path is not None else None
    details = {"spilled_to": spilled_to}
    return ToolOutcome(text, bool(result.is_error), details)


async def _save_blob(
    data: str, mime: str, kind: str, spill_dir: Path, call_id: str, tool: str, index: int
) -> str:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"[{kind} ({mime}) that is not valid base64; not saved]"
    ext = mimetypes.guess_extension(mime) or ".bin"
    path = spill_dir / (spill_name(call_id, f"{tool}-{index}")[: -len(".txt")] + ext)

    def write() -> str | None:
        try:
            spill_dir.mkdir(parents=True, exist_ok=True)
            path.write_bytes(raw)
        except OSError as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    problem = await trio.to_thread.run_sync(write)
    if problem is not None:
        return f"[{kind} ({mime}, {len(raw):,} bytes) could not be saved: {problem}]"
    return f"[{kind} ({mime}, {len(raw):,} bytes) saved to {path}]"
