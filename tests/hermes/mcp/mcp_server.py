"""A real MCP server for the tests, written with the SDK's ``MCPServer``.

Run as ``python mcp_server.py [--http] [--state FILE]``: stdio by default;
with ``--http`` it serves streamable HTTP (``--sse``: legacy SSE, at
``/sse``) on 127.0.0.1 (a free port, printed
as the first line of stdout). ``--state FILE`` counts starts in FILE so a
test can tell a restarted server from the first one. ``--exit-at-start CODE``
and ``--hang-at-start`` make a server that never starts.
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import sys
import time
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, TextContent, Tool, ToolAnnotations
from pydantic import BaseModel

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-image-bytes").decode()


class TestServer(MCPServer):
    """With ``odd`` set, it also lists tools whose names or schemas need care."""

    odd = False

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        if self.odd:
            tools += [
                Tool(name="top.any", input_schema={"type": "object", "anyOf": [{}, {}]}),
                Tool(
                    name="broken",
                    input_schema={"type": "object", "properties": {"x": {"type": "nope"}}},
                ),
                Tool(name="dotted.name", input_schema={"type": "object", "properties": {}}),
            ]
        return tools


app = TestServer("test-server", version="1.0")


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Answer the text, prefixed."""
    return f"echo: {text}"


@app.tool()
def getenv(name: str) -> str:
    """The value of an environment variable of the server, or <unset>."""
    return os.environ.get(name, "<unset>")


@app.tool()
def starts() -> str:
    """How many times this server has started (with --state)."""
    return os.environ.get("TEST_STARTS", "?")


@app.tool()
async def add_tool(ctx: Context) -> str:
    """Add a tool named 'late' and tell the client the list changed."""

    def late() -> str:
        """A tool added at run time."""
        return "late tool ran"

    app.add_tool(late, name="late", description="A tool added at run time.")
    await ctx.session.send_tool_list_changed()
    return "added"


@app.tool()
async def drop_tool(name: str, ctx: Context) -> str:
    """Remove the tool NAME and tell the client the list changed."""
    app.remove_tool(name)
    await ctx.session.send_tool_list_changed()
    return "dropped"


def _mark(path: str, text: str) -> None:
    Path(path).write_text(text)


@app.tool()
async def hang(marker: str = "") -> str:
    """Never answers; writes MARKER.started, then MARKER.cancelled when the client cancels."""
    if marker:
        _mark(marker + ".started", "started\n")
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        if marker:
            _mark(marker + ".cancelled", "cancelled\n")
        raise
    return "never"


class Answer(BaseModel):
    name: str


@app.tool()
async def ask(ctx: Context) -> str:
    """Ask the user for a name (elicitation); answer what the client did."""
    result = await ctx.elicit("What is your name?", Answer)
    if result.action == "accept":
        return f"elicitation: accept, name {result.data.name}"
    return f"elicitation: {result.action}"


class Confirm(BaseModel):
    pass


@app.tool()
async def confirm(ctx: Context) -> str:
    """Ask the user to confirm (elicitation with no fields); answer what the client did."""
    result = await ctx.elicit("Delete the draft?", Confirm)
    return f"elicitation: {result.action}"


@app.tool()
async def steps(ctx: Context) -> str:
    """Report progress three times, then answer."""
    for step in range(1, 4):
        await ctx.report_progress(step, 3, f"step {step}")
    return "stepped"


@app.tool()
async def sample(prompt: str, ctx: Context, max_tokens: int = 100, model: str = "") -> str:
    """Ask the client's model (sampling); answer its reply, or the error."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import ModelHint, ModelPreferences, SamplingMessage

    prefs = ModelPreferences(hints=[ModelHint(name=model)]) if model else None
    try:
        result = await ctx.session.create_message(
            [SamplingMessage(role="user", content=TextContent(text=prompt))],
            max_tokens=max_tokens,
            system_prompt="Answer briefly.",
            model_preferences=prefs,
        )
    except MCPError as exc:
        return f"sampling error: {exc.error.message}"
    text = result.content.text if isinstance(result.content, TextContent) else "?"
    return f"sampled ({result.model}, {result.stop_reason}): {text}"


@app.tool()
def garbage() -> str:
    """Write a line that is not JSON-RPC to stdout, then answer normally."""
    sys.stdout.write("this is not json\n")
    sys.stdout.flush()
    return "after garbage"


@app.tool()
def crash() -> str:
    """Exit the whole server process mid-call."""
    sys.stderr.write("crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@app.tool()
def big(size: int) -> str:
    """SIZE characters of text."""
    line = "0123456789abcdefghijklmnopqrstuvwxyz\n"
    return (line * (size // len(line) + 1))[:size]


@app.tool()
def fail(why: str) -> str:
    """Fail (the client sees isError with the message)."""
    raise ToolError(f"failed because {why}")


@app.tool()
def picture() -> list[TextContent | ImageContent]:
    """A text block and an image."""
    return [TextContent(text="here it is"), ImageContent(data=PNG, mime_type="image/png")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--sse", action="store_true")
    parser.add_argument("--exit-at-start", type=int, default=None)
    parser.add_argument("--state", default=None)
    parser.add_argument("--hang-at-start", action="store_true")
    parser.add_argument("--odd-tools", action="store_true")
    args = parser.parse_args()
    if args.exit_at_start is not None:
        sys.stderr.write("cannot start: no configuration\n")
        sys.exit(args.exit_at_start)
    app.odd = args.odd_tools
    if args.hang_at_start:
        time.sleep(3600)  # never reads stdin, never answers initialize
    if args.state:
        state = Path(args.state)
        count = int(state.read_text()) + 1 if state.exists() else 1
        state.write_text(str(count))
        os.environ["TEST_STARTS"] = str(count)
    if not (args.http or args.sse):
        app.run()
        return
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    web = app.sse_app() if args.sse else app.streamable_http_app()
    config = uvicorn.Config(web, log_level="warning")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
