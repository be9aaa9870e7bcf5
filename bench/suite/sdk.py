"""The baseline: the same model calls made with the bare ``anthropic`` SDK from this process.

The fake recorded the raw bodies of one session's requests (tag ``#rec``);
``bare_cpu`` replays them, cycling, with ``concurrency`` callers until
``calls`` requests were made, and returns this process's CPU for it. Each
call is what the daemon's model client does at the wire (a streamed
``messages.create``, every event read) and nothing else.
"""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import trio

from .harness import API_KEY


def load_bodies(record_dir: Path) -> list[dict[str, Any]]:
    """The recorded request bodies, in the order the daemon sent them."""
    return [json.loads(p.read_bytes()) for p in sorted(record_dir.glob("*.json"))]


def _kwargs(body: dict[str, Any], known: set[str]) -> dict[str, Any]:
    kwargs = {k: v for k, v in body.items() if k in known and k != "stream"}
    extra = {k: v for k, v in body.items() if k not in known and k != "stream"}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


async def bare_cpu(url: str, bodies: list[dict[str, Any]], calls: int, concurrency: int) -> float:
    """CPU seconds of this process to make ``calls`` streamed calls (``bodies`` cycled)."""
    if not bodies or calls <= 0:
        return 0.0
    http = httpx2.AsyncClient(trust_env=False)
    async with anthropic.AsyncAnthropic(
        api_key=API_KEY, base_url=url, max_retries=0, http_client=http
    ) as sdk:
        known = set(inspect.signature(sdk.messages.create).parameters)
        requests = [_kwargs(b, known) for b in bodies]
        counter = iter(range(calls))

        async def one(kwargs: dict[str, Any]) -> None:
            stream = await sdk.messages.create(**kwargs, stream=True)
            async with stream:
                async for _ in stream:
                    pass

        async def worker(offset: int) -> None:
            for n in counter:
                await one(requests[(offset + n) % len(requests)])

        await one(requests[0])  # warm up: connection, imports, caches
        start = time.process_time()
        async with trio.open_nursery() as nursery:
            for i in range(max(1, concurrency)):
                nursery.start_soon(worker, i)
        return time.process_time() - start
