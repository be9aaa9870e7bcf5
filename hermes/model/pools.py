"""``SdkPools``: the SDK clients of a ``ModelClient``, each with a small connection pool.

httpcore's pool probes every idle connection it holds (a ``poll(2)`` on its
socket, to notice a server that hung up) each time a request joins the pool
and each time a response closes. One pool for a daemon's fifty concurrent
streams probed ~50 connections twice per model call: ~4 % of the event loop
under ``hermes bench sessions``. So requests fill small pools in order: a
request takes the first pool with fewer than ``PER_POOL`` requests in flight
(opening the next pool when all are that busy, up to ``POOLS``; past that the
least busy one), and a pass probes at most a few connections. A quiet daemon
uses the first pool alone, so its connection stays warm as with one pool.
The pools share one SSL context and together keep about the limits one pool
had (1,000 connections, 100 kept alive).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import anthropic
import httpx2

PER_POOL = 8
POOLS = 13
MAX_CONNECTIONS = 1000


class SdkPools:
    """SDK clients over one SSL context, opened as the load needs them; ``lease()`` one."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        trust_env: bool,
        connect_timeout: float,
        per_pool: int = PER_POOL,
        pools: int = POOLS,
    ) -> None:
        if per_pool < 1 or pools < 1:
            raise ValueError(f"per_pool and pools must be at least 1, got {per_pool}, {pools}")
        self._api_key = api_key
        self._base_url = base_url
        self._trust_env = trust_env
        self._timeout = httpx2.Timeout(None, connect=connect_timeout)
        self._verify = httpx2.create_ssl_context(trust_env=trust_env)
        self._limits = httpx2.Limits(
            max_connections=math.ceil(MAX_CONNECTIONS / pools),
            max_keepalive_connections=per_pool,
        )
        self._per_pool = per_pool
        self._pools = pools
        self.clients: list[anthropic.AsyncAnthropic] = []
        self.busy: list[int] = []
        """Requests in flight per client."""
        self._open()

    def _open(self) -> None:
        http = httpx2.AsyncClient(
            verify=self._verify,
            trust_env=self._trust_env,
            timeout=self._timeout,
            limits=self._limits,
        )
        # The SDK's own retries are off: ours honour a deadline and are cancellable.
        self.clients.append(
            anthropic.AsyncAnthropic(
                api_key=self._api_key, base_url=self._base_url, max_retries=0, http_client=http
            )
        )
        self.busy.append(0)

    def _pick(self) -> int:
        busy = self.busy
        for index, count in enumerate(busy):
            if count < self._per_pool:
                return index
        if len(busy) < self._pools:
            self._open()
            return len(busy) - 1
        return busy.index(min(busy))

    @contextmanager
    def lease(self) -> Iterator[anthropic.AsyncAnthropic]:
        """A client for one request, counted as busy until the block ends."""
        index = self._pick()
        self.busy[index] += 1
        try:
            yield self.clients[index]
        finally:
            self.busy[index] -= 1

    async def aclose(self) -> None:
        """Close every client (and its HTTP connections)."""
        for client in self.clients:
            await client.close()
