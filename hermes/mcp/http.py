"""The HTTP transports: streamable HTTP, and legacy SSE for servers that only speak that.

Both are the SDK's (``streamable_http_client``, ``sse_client``) on the
``httpx2`` stack the project already uses. A loopback URL ignores proxy
settings from the environment.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx2
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from .stdio import Streams

CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 300.0
"""A server may hold a response stream open this long without an event."""


def _loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in ("127.0.0.1", "::1", "localhost")


@asynccontextmanager
async def http_transport(
    url: str, headers: dict[str, str], auth: httpx2.Auth | None = None
) -> AsyncIterator[Streams]:
    """Streamable HTTP (the current transport); ``auth``: the SDK's OAuth provider, if any."""
    timeout = httpx2.Timeout(CONNECT_TIMEOUT, read=READ_TIMEOUT)
    options: dict[str, Any] = {"auth": auth} if auth is not None else {}
    async with (
        httpx2.AsyncClient(
            headers=headers, timeout=timeout, trust_env=not _loopback(url), **options
        ) as client,
        streamable_http_client(url, http_client=client) as (read, write),
    ):
        yield read, write  # type: ignore[misc]


@asynccontextmanager
async def sse_transport(url: str, headers: dict[str, str]) -> AsyncIterator[Streams]:
    """Legacy HTTP+SSE (protocol 2024-11-05): a GET event stream, messages POSTed."""
    trust = not _loopback(url)

    def client(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        options: dict[str, Any] = {"headers": headers, "timeout": timeout, "trust_env": trust}
        if auth is not None:
            options["auth"] = auth
        return httpx2.AsyncClient(**options)

    async with sse_client(
        url,
        headers=headers,
        timeout=CONNECT_TIMEOUT,
        sse_read_timeout=READ_TIMEOUT,
        httpx_client_factory=client,
    ) as (read, write):
        yield read, write
