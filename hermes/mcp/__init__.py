"""MCP: external tool servers as supervised actors (the ``mcp`` SDK's client on trio).

| module | one job |
|---|---|
| ``config.py`` | ``[mcp.servers.NAME]``: ``parse_mcp`` (pure, no SDK import), ``ServerConfig`` |
| ``stdio.py`` | the stdio transport: the server in its own process group, exact env |
| ``link.py`` | ``ServerLink``: a server's live state, shared by its actor and its tools |
| ``server.py`` | ``McpServerActor``: connect, initialize, list, refresh, retry with backoff |
| ``supervisor.py`` | ``McpSupervisor``: one actor per enabled server, one_for_one |
| ``tools.py`` | ``McpTool``: ``mcp_<server>_<tool>`` with the server's schema |
| ``convert.py`` | a ``CallToolResult`` as a ``ToolOutcome`` (spilled past 50,000 characters) |

Importing this package imports only the configuration; the SDK is loaded
with ``hermes.mcp.supervisor`` (or the other modules), when a server is
configured.
"""

from .config import McpConfig, ServerConfig, parse_mcp

__all__ = ["McpConfig", "ServerConfig", "parse_mcp"]
