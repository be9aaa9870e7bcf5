"""``hermes mcp test NAME``: a fresh connection to a server, timed, beside the live one.

Connect (for stdio: spawn a second server process) and ``initialize``, list
the tools, one ping; then the connection is closed (the process stopped and
reaped). The whole probe is bounded by ``PROBE_TIMEOUT`` (or the server's
``connect_timeout``, if shorter), so a CLI call to it always gets an answer.
An HTTP server in ``transport = "auto"`` is probed over streamable HTTP, then
legacy SSE if that fails.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio
from mcp.client.session import ClientSession

from .config import ServerConfig
from .server import CLIENT_INFO, describe, open_transport
from .stdio import Exited

PROBE_TIMEOUT = 20.0


async def probe(
    config: ServerConfig,
    environ: Mapping[str, str] | None = None,
    data_dir: Path | None = None,
) -> dict[str, Any]:
    """``{ok, transport, connect_ms, list_ms, ping_ms, listed, server}``, or ``ok`` false
    with the ``reason``; ``data_dir``: where an OAuth server's tokens are."""
    environ = os.environ if environ is None else environ
    modes = [config.http_mode == "sse"]
    if config.url is not None and config.http_mode == "auto" and config.auth != "oauth":
        modes = [False, True]
    answer: dict[str, Any] = {}
    for sse in modes:
        answer = await _once(config, environ, sse, data_dir)
        if answer["ok"]:
            break
    return answer


async def _once(
    config: ServerConfig, environ: Mapping[str, str], sse: bool, data_dir: Path | None
) -> dict[str, Any]:
    transport = config.transport if config.url is None else ("sse" if sse else "streamable_http")
    exited = Exited()
    timeout = min(PROBE_TIMEOUT, config.connect_timeout)
    began = trio.current_time()
    marks: list[float] = []
    found: dict[str, Any] = {}
    try:
        with trio.fail_after(timeout):
            async with (
                open_transport(config, environ, exited, sse=sse, data_dir=data_dir) as (
                    read,
                    write,
                ),
                ClientSession(read, write, client_info=CLIENT_INFO) as session,
            ):
                init = await session.initialize()
                marks.append(trio.current_time())
                listed = await session.list_tools()
                marks.append(trio.current_time())
                await session.send_ping()
                marks.append(trio.current_time())
                found = {
                    "listed": len(listed.tools),
                    "server": f"{init.server_info.name} {init.server_info.version}".strip(),
                }
    except trio.TooSlowError:
        step = ("initialize", "tools/list", "ping")[len(marks)]
        reason = f"no answer to {step} within {timeout:g} s"
        return {"ok": False, "transport": transport, "reason": reason}
    except Exception as exc:  # the server's failure is this answer
        reason = exited.describe() if exited.ended_first else describe(exc)
        return {"ok": False, "transport": transport, "reason": reason}

    def ms(start: float, end: float) -> float:
        return round((end - start) * 1000, 2)

    return {
        "ok": True,
        "transport": transport,
        "connect_ms": ms(began, marks[0]),
        "list_ms": ms(marks[0], marks[1]),
        "ping_ms": ms(marks[1], marks[2]),
        **found,
    }
