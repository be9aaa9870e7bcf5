"""The MCP server the ``mcp`` benchmark talks to (the SDK's ``MCPServer`` over stdio).

``hang`` writes ``MARKER.started`` once it runs and ``MARKER.cancelled`` the
moment the client's ``notifications/cancelled`` reaches it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer

app = MCPServer("bench-server", version="1.0")


@app.tool()
def echo(text: str) -> str:
    """Answer the text."""
    return text


def _mark(path: str) -> None:
    Path(path).write_text("mark\n")


@app.tool()
async def hang(marker: str) -> str:
    """Never answers; writes MARKER.started, then MARKER.cancelled when cancelled."""
    _mark(marker + ".started")
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        _mark(marker + ".cancelled")
        raise
    return "never"


@app.tool()
def crash() -> str:
    """Exit the server mid-call."""
    sys.stdout.flush()
    os._exit(3)


if __name__ == "__main__":
    app.run()
