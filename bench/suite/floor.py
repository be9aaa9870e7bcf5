"""The box's floor for the cancel storm: the same request shapes to a bare trio server.

``floor_server.py`` runs as a process of its own beside the daemon. Each
request the storm sends the daemon (a WebSocket cancel, an HTTP cancel, a
``daemon.status``) is followed, interleaved in the same run and under the
same storm, by the same shape to the floor: a frame on a WebSocket of its own
(``hermes.gateway.client``, as the daemon's), a ``POST`` on a new connection
through the same HTTP client. ``*_floor_ratio`` = the daemon's p99 under load /
the floor's p99 under the same load (target <= 2): what the daemon adds to
what the box costs any trio server at that moment.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx2

from bench.child import serving
from hermes.gateway.client import Client, connect

SHAPES = ("ws_cancel", "http_cancel", "status")


class Floor:
    """Round trips to the floor server, in seconds, kept by shape and phase."""

    def __init__(self, url: str, token: str, ws: Client, status: Client, http: httpx2.AsyncClient):
        self.url, self.token = url, token
        self.ws, self.status_ws, self.http = ws, status, http
        self.samples: dict[str, dict[str, list[float]]] = {
            phase: {s: [] for s in SHAPES} for phase in ("idle", "load")
        }
        self.phase = "idle"

    async def ws_cancel(self, session: str) -> None:
        start = time.monotonic()
        await self.ws.call("cancel", session=session)
        self.samples[self.phase]["ws_cancel"].append(time.monotonic() - start)

    async def http_cancel(self, path: str) -> None:
        start = time.monotonic()
        response = await self.http.post(
            self.url + path, json={}, headers={"Authorization": f"Bearer {self.token}"}
        )
        response.json()
        if response.status_code != 200:
            raise RuntimeError(f"floor POST {path}: {response.status_code}")
        self.samples[self.phase]["http_cancel"].append(time.monotonic() - start)

    async def status(self) -> None:
        start = time.monotonic()
        await self.status_ws.call("daemon.status")
        self.samples[self.phase]["status"].append(time.monotonic() - start)


@asynccontextmanager
async def open_floor(http: httpx2.AsyncClient) -> AsyncIterator[Floor]:
    """Start the floor server and open its two WebSockets; stopped on exit."""
    token = secrets.token_hex(16)
    with serving(["bench.suite.floor_server", "--token", token]) as (url, _pid):
        ws_url = "ws://" + url.removeprefix("http://") + "/ws"
        async with AsyncExitStack() as stack:
            ws = await stack.enter_async_context(connect((ws_url, token)))
            status = await stack.enter_async_context(connect((ws_url, token)))
            yield Floor(url, token, ws, status, http)
