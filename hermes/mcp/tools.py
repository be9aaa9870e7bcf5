"""MCP server tools as Hermes tools: ``mcp_<server>_<tool>``, the server's schema, one call each.

``McpTool.run`` makes the call on the connection the server's actor holds
(``ServerLink.session``). The batch runner gives it the server's ``timeout``
as its deadline; when the deadline passes or the turn is cancelled, the call
is cancelled and the SDK sends the server ``notifications/cancelled`` for the
request (shielded, bounded) before the cancellation goes on, and the batch
records its usual synthetic result. While the server is down the tool
answers ``ServerLink.unavailable()`` at once.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pydantic
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from hermes.tools import Finding, Tool, ToolContext, ToolKind, ToolOutcome, is_secret_name
from hermes.tools.approval import decide_findings

from .convert import to_outcome
from .link import ServerLink

MAX_NAME = 64
"""Longest tool name the Messages API accepts."""


def tool_name(server: str, tool: str) -> str:
    """``mcp_<server>_<tool>``, with characters the model API refuses replaced by ``_``.

    A name over ``MAX_NAME`` keeps its start and ends in a short hash of the whole.
    """
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp_{server}_{tool}")
    if len(name) > MAX_NAME:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def schema_problem(schema: object) -> str | None:
    """Why the Messages API would refuse ``schema`` as a tool's ``input_schema``, or None."""
    if not isinstance(schema, dict):
        return "its input schema is not a JSON object"
    if schema.get("type") != "object":
        return "its input schema's type is not 'object'"
    for key in ("oneOf", "anyOf", "allOf"):
        if key in schema:
            return f"its input schema uses {key} at the top level"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"its input schema is not valid JSON Schema ({exc.message[:200]})"
    return None


def shown_arguments(args: Mapping[str, Any], limit: int = 600) -> str:
    """The arguments as a person approving the call sees them: secret-named values hidden."""

    def redact(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: "***" if isinstance(k, str) and is_secret_name(k) else redact(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [redact(v) for v in value]
        return value

    text = json.dumps(redact(dict(args)), ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class McpTool(Tool):
    """One tool of one MCP server, as the model sees it."""

    toolset = "mcp"

    def __init__(self, link: ServerLink, tool: types.Tool, name: str) -> None:
        self.link = link
        self.remote = tool.name
        self.name = name
        server = link.config.name
        self.mcp_server = server
        """Its server's name: a session that turned the server off does not see it."""
        described = (tool.description or tool.title or "").strip()
        self.description = f"[MCP server {server}] {described}".strip()
        self.input_schema = dict(tool.input_schema)
        self.kind = ToolKind.READ_ONLY if link.config.parallel else ToolKind.OTHER
        hints = tool.annotations
        self.read_only_hint = bool(hints is not None and hints.read_only_hint is True)
        """The server's own ``readOnlyHint`` (what an untrusted server's gate will read)."""

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...] | None:
        return () if self.link.config.parallel else None

    def call_timeout(self, args: Mapping[str, Any]) -> float | None:
        return self.link.config.timeout

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        link = self.link
        session = link.session
        server = link.config.name
        if session is None:
            return ToolOutcome.error(link.unavailable(), server=server, unavailable=True)
        if link.config.trust == "untrusted" and not self.read_only_hint:
            decision = await decide_findings(
                f"{self.name} {shown_arguments(args)}",
                (self.finding(),),
                session=ctx.approvals,
                ask=ctx.ask_approval,
                call_id=ctx.call_id,
                pause=ctx.pause_deadline,
            )
            if not decision.allowed:
                refused = decision.refusal().replace("the same command", "the same call")
                text = refused.replace("Command NOT run", f"Call to {self.name} NOT made")
                return ToolOutcome.error(text, ran=False, verdict=decision.verdict.value)
            session = link.session  # it may have gone down while a person decided
            if session is None:
                return ToolOutcome.error(link.unavailable(), server=server, unavailable=True)

        async def report(progress: float, total: float | None, message: str | None) -> None:
            text = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            ctx.report("output", f"{text} {message}" if message else text)

        key = f"{ctx.call_id}:{id(ctx)}"
        link.calls[key] = ctx
        try:
            result = await session.call_tool(self.remote, dict(args), progress_callback=report)
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                return self._closed(server)
            return ToolOutcome.error(
                f"MCP server '{server}' answered the call to {self.remote} with an error "
                f"({exc.error.code}): {exc.error.message}",
                server=server,
            )
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            return self._closed(server)
        except pydantic.ValidationError as exc:
            return ToolOutcome.error(
                f"MCP server '{server}' sent a malformed result for {self.remote}: "
                f"{str(exc)[:300]}",
                server=server,
            )
        finally:
            link.calls.pop(key, None)
        return await to_outcome(result, ctx.spill_dir, ctx.call_id or "call", self.name)

    def finding(self) -> Finding:
        """Why a call needs approval: a write-capable tool of an untrusted server."""
        server = self.link.config.name
        return Finding(
            f"mcp:{server}:{self.remote}",
            f"{self.remote} of untrusted MCP server '{server}' is not marked read-only",
            hardline=False,
        )

    def _closed(self, server: str) -> ToolOutcome:
        return ToolOutcome.error(
            f"MCP server '{server}' closed the connection during the call to {self.remote}; "
            "it may have partly completed.",
            server=server,
        )
