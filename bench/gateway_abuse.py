"""The gateway under abuse (part of ``python -m bench gateway``), against a real daemon:

- ``flood_rss_growth_mb``: one WebSocket client sends ``daemon.status`` requests as
  fast as the daemon takes them while it reads its answers at only 64 KB/s, for
  ``flood_seconds``. The figure is the daemon's peak RSS above its RSS before the
  flood (``VmRSS`` of the daemon process, sampled every 100 ms); target <= 50 MB.
  ``flood_rss_after_mb`` is the RSS above the start ``settle_seconds`` after the
  client left; ``flood_rss_after_pct`` the same as a share of the start RSS
  (target <= 10). While it floods, a second
  client's connect and first answer are timed (``owner_connect_ms_during_flood``).
- ``owner_connect_ms_under_lockout``: another client holds every unauthenticated
  slot (``gateway.max_unauthenticated`` idle TCP connections that never send a
  byte, reopened as soon as the daemon drops one); the owner's WebSocket connect
  and first answer (``daemon.status``), median of ``lockout_samples``; target <=
  100. ``owner_connect_ms_baseline`` is the same without the idle connections,
  measured in the same run.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

import trio
import trio_websocket

from hermes.gateway.client import Endpoint, connect

READ_RATE = 64 * 1024
"""Bytes per second the flooding client reads."""


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class Throttled(trio.abc.Stream):
    """A TCP stream read at ``rate`` bytes per second at most."""

    def __init__(self, stream: trio.SocketStream, rate: int) -> None:
        self.stream = stream
        self.rate = rate
        self.started = trio.current_time()
        self.received = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        due = self.started + self.received / self.rate
        await trio.sleep_until(due)  # pacing, not synchronisation
        chunk = min(max_bytes or 4096, 4096)
        data = await self.stream.receive_some(chunk)
        self.received += len(data)
        return bytes(data)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.stream.aclose()


def _address(endpoint: Endpoint) -> tuple[str, int]:
    return endpoint.info["host"], int(endpoint.info["port"])


async def owner_connect_ms(endpoint: Endpoint) -> float:
    """Connect, authenticate and get the first answer, in ms."""
    start = time.perf_counter()
    async with connect(endpoint) as client:
        await client.call("daemon.status", timeout=60)
        took = time.perf_counter() - start
    return took * 1000


async def measure_flood(
    endpoint: Endpoint, flood_seconds: float, settle_seconds: float
) -> dict[str, Any]:
    pid = endpoint.pid
    async with connect(endpoint) as probe:
        await probe.call("daemon.stats", collect=True)
    start_rss = rss_bytes(pid)
    peak = start_rss
    sent = answered = 0
    probes: list[float] = []
    host, port = _address(endpoint)
    request = json.dumps({"id": 1, "method": "daemon.status", "params": {}})
    headers = [(b"authorization", f"Bearer {endpoint.token}".encode())]
    async with trio.open_nursery() as outer:

        async def sample() -> None:
            nonlocal peak
            while True:
                peak = max(peak, rss_bytes(pid))
                await trio.sleep(0.1)

        outer.start_soon(sample)
        with trio.move_on_after(flood_seconds):
            async with trio.open_nursery() as nursery:
                stream = Throttled(await trio.open_tcp_stream(host, port), READ_RATE)
                ws = await trio_websocket.wrap_client_stream(
                    nursery,
                    stream,  # type: ignore[arg-type]  # any trio stream works
                    host,
                    "/ws",
                    extra_headers=headers,
                    message_queue_size=64,
                )

                async def read() -> None:
                    nonlocal answered
                    while True:
                        await ws.get_message()
                        answered += 1

                async def probe_owner() -> None:
                    while True:
                        probes.append(await owner_connect_ms(endpoint))
                        await trio.sleep(1.0)

                nursery.start_soon(read)
                nursery.start_soon(probe_owner)
                while True:
                    await ws.send_message(request)
                    sent += 1
        await trio.aclose_forcefully(stream)
        left = time.perf_counter()
        owner_ms = 0.0
        with trio.fail_after(60):
            owner_ms = await owner_connect_ms(endpoint)
        await trio.sleep(max(0.0, settle_seconds - (time.perf_counter() - left)))
        after_rss = rss_bytes(pid)
        outer.cancel_scope.cancel()
    mb = 1 << 20
    return {
        "flood_rss_growth_mb": round((peak - start_rss) / mb, 1),
        "flood_rss_after_mb": round((after_rss - start_rss) / mb, 1),
        "flood_rss_after_pct": round(100 * (after_rss - start_rss) / start_rss, 1),
        "flood": {
            "seconds": flood_seconds,
            "settle_seconds": settle_seconds,
            "read_bytes_per_s": READ_RATE,
            "start_rss_mb": round(start_rss / mb, 1),
            "peak_rss_mb": round(peak / mb, 1),
            "after_rss_mb": round(after_rss / mb, 1),
            "after_within_10pct": after_rss <= start_rss * 1.1,
            "requests_sent": sent,
            "answers_read": answered,
            "owner_connect_ms_during_flood": _ms(probes),
            "owner_connect_ms_after_flood": round(owner_ms, 1),
        },
    }


def _ms(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"n": 0, "p50": 0.0, "max": 0.0}
    return {
        "n": len(samples),
        "p50": round(statistics.median(samples), 1),
        "max": round(max(samples), 1),
    }


async def measure_lockout(endpoint: Endpoint, slots: int, samples: int) -> dict[str, Any]:
    baseline = [await owner_connect_ms(endpoint) for _ in range(samples)]
    host, port = _address(endpoint)
    held = 0
    reopened = 0
    ready = trio.Event()

    async def hold_one() -> None:
        nonlocal held, reopened
        while True:
            stream = await trio.open_tcp_stream(host, port)
            held += 1
            if held >= slots:
                ready.set()
            async with stream:
                while await stream.receive_some(4096):
                    pass  # dropped by the daemon: open another
            held -= 1
            reopened += 1

    locked: list[float] = []
    async with trio.open_nursery() as nursery:
        for _ in range(slots):
            nursery.start_soon(hold_one)
        await ready.wait()
        for _ in range(samples):
            with trio.fail_after(60):
                locked.append(await owner_connect_ms(endpoint))
        nursery.cancel_scope.cancel()
    return {
        "owner_connect_ms_under_lockout": round(statistics.median(locked), 1),
        "owner_connect_ms_baseline": round(statistics.median(baseline), 1),
        "lockout": {
            "idle_connections": slots,
            "reopened_after_drop": reopened,
            "under_lockout_ms": _ms(locked),
            "baseline_ms": _ms(baseline),
        },
    }
