"""``python -m bench model``: the model client's cost over the bare SDK, and the fake's cost.

The fake provider runs in its own process (``python -m hermes fake-provider``),
so its CPU is not charged to the client; its own CPU per request is read from
``/proc/<pid>/stat``. Every figure is measured in the same run:

- ``client_overhead_ratio``: client CPU per streamed call through
  ``ModelClient`` divided by the bare SDK streaming the same reply (raw
  ``create(stream=True)`` events, nothing built). Target <= 1.15.
- ``fake_server_us_per_request``: the fake's CPU per streamed request.
- ``calls_per_s``: ``ModelClient`` calls per second at concurrency 1 and 16.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anthropic
import attrs
import httpx2
import trio

from hermes.model import Message, ModelClient, ModelRequest, RetryPolicy

from .child import serving
from .stats import format_table, targets_met

API_KEY = "bench-key"
TARGETS: dict[str, tuple[str, float]] = {"client_overhead_ratio": ("<=", 1.15)}
MODEL = "hermes-demo"


@attrs.frozen
class Sizes:
    calls: int = 1_000
    """Per batch; the fake's CPU is read in clock ticks (10 ms), so this sets its resolution."""
    concurrent_calls: int = 1_600

    @classmethod
    def quick(cls) -> Sizes:
        return cls(calls=40, concurrent_calls=32)


@contextmanager
def fake_provider() -> Iterator[tuple[str, int]]:
    """Start the fake provider in a child process; yield (base_url, pid)."""
    with serving(["hermes", "fake-provider", "--port", "0", "--api-key", API_KEY]) as served:
        yield served


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid``, from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def request() -> ModelRequest:
    return ModelRequest(model=MODEL, messages=(Message.user("Say hello in a few words."),))


async def cpu_per_call(run_one: Callable[[], Awaitable[None]], n: int) -> float:
    """Median-of-five client CPU seconds per call, after a warm-up."""
    for _ in range(5):
        await run_one()
    samples = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(n):
            await run_one()
        samples.append((time.process_time() - start) / n)
    return statistics.median(samples)


async def throughput(client: ModelClient, total: int, concurrency: int) -> float:
    """Calls per second with ``concurrency`` callers sharing ``total`` calls."""
    per_worker = max(total // concurrency, 1)

    async def worker() -> None:
        for _ in range(per_worker):
            await client.complete(request())

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    return per_worker * concurrency / (time.perf_counter() - start)


async def measure_with(url: str, pid: int, sizes: Sizes) -> dict[str, Any]:
    http = httpx2.AsyncClient(trust_env=False)
    async with (
        anthropic.AsyncAnthropic(
            api_key=API_KEY, base_url=url, max_retries=0, http_client=http
        ) as sdk,
        ModelClient(api_key=API_KEY, base_url=url, trust_env=False, retry=RetryPolicy()) as client,
    ):
        params: dict[str, Any] = {
            "model": MODEL,
            "max_tokens": 256,
            "messages": [{"role": "user", "content": "Say hello in a few words."}],
        }

        async def bare() -> None:
            stream = await sdk.messages.create(**params, stream=True)
            async with stream:
                async for _ in stream:
                    pass

        async def ours() -> None:
            await client.complete(request())

        bare_cpu = await cpu_per_call(bare, sizes.calls)
        ours_cpu = await cpu_per_call(ours, sizes.calls)
        server_before = process_cpu_seconds(pid)
        wall = time.perf_counter()
        for _ in range(sizes.calls):
            await ours()
        wall = time.perf_counter() - wall
        server_cpu = (process_cpu_seconds(pid) - server_before) / sizes.calls
        serial = sizes.calls / wall
        concurrent = await throughput(client, sizes.concurrent_calls, 16)
    return {
        "client_overhead_ratio": ours_cpu / bare_cpu,
        "fake_server_us_per_request": server_cpu * 1e6,
        "calls_per_s": {"1": serial, "16": concurrent},
        "details": {
            "client_cpu_us_per_call": {"model_client": ours_cpu * 1e6, "bare_sdk": bare_cpu * 1e6},
            "sizes": attrs.asdict(sizes),
        },
    }


def measure(sizes: Sizes) -> dict[str, Any]:
    with fake_provider() as (url, pid):
        results = trio.run(measure_with, url, pid, sizes)
    results["targets_met"] = targets_met(results, TARGETS)
    return results


def render(results: dict[str, Any]) -> str:
    d = results["details"]["client_cpu_us_per_call"]
    rows = [
        (
            "client_overhead_ratio",
            f"{results['client_overhead_ratio']:.3f}",
            f"ModelClient {d['model_client']:.0f} us CPU/call vs bare SDK {d['bare_sdk']:.0f} us",
            "<= 1.15",
            "yes" if results["targets_met"]["client_overhead_ratio"] else "NO",
        ),
        (
            "fake_server_us_per_request",
            f"{results['fake_server_us_per_request']:.0f}",
            "fake provider CPU per streamed request (its own process)",
            "~300",
            "-",
        ),
        ("calls_per_s (1)", f"{results['calls_per_s']['1']:.0f}", "sequential calls", "-", "-"),
        (
            "calls_per_s (16)",
            f"{results['calls_per_s']['16']:.0f}",
            "16 concurrent callers",
            "-",
            "-",
        ),
    ]
    return format_table(("figure", "value", "measured", "target", "met"), rows)


def main(json_output: bool, quick: bool, reps: int) -> int:
    del reps  # each figure is already a median of five batches
    results = measure(Sizes.quick() if quick else Sizes())
    print(json.dumps(results, indent=2) if json_output else render(results))
    return 0
