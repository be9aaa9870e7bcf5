"""Control under load, for the ``cancel`` scenario: the same requests idle and under load.

Before the load starts, the storm's victims are cancelled a few times from
``ws`` and ``http`` and ``daemon.status`` is pinged on the pool's first
connection: those answers' p50 on the idle daemon is each request's own
baseline, measured in the same run. During the storm a pinger sends
``daemon.status`` on the same connection (which carries load sessions'
events) every ``PING_EVERY`` seconds. A cancel's latency here is its round
trip: the ``cancel`` (``subagent.stop``) frame or ``POST`` leaving to its
answer, which the session gives once the turn is settled and persisted.

``*_load_ratio`` = the p99 under load / the idle p50 (the target is <= 4);
``gc_pause_p99_ms`` is the daemon's own collector pauses (``daemon.stats``
``gc``, ``actors.GcPauses``), with the storm's share of its histogram.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import trio

from .driver import Pool
from .figures import latency_ms, percentile

PING_EVERY = 0.05
IDLE_PINGS = 40


async def ping_status(pool: Pool, samples: list[float], count: int | None = None) -> None:
    """``daemon.status`` round trips on the pool's first connection, ``count`` or forever."""
    done = 0
    while count is None or done < count:
        start = time.monotonic()
        await pool.client.call("daemon.status", timeout=30.0)
        samples.append(time.monotonic() - start)
        done += 1
        await trio.sleep(PING_EVERY)


def gc_storm(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What the collector did between two ``daemon.stats`` answers' ``gc``."""
    generations = []
    for old, new in zip(before["generations"], after["generations"], strict=True):
        generations.append(
            {
                "generation": new["generation"],
                "collections": new["collections"] - old["collections"],
                "total_ms": round(new["total_ms"] - old["total_ms"], 3),
                "histogram_ms": {
                    k: v - old["histogram_ms"].get(k, 0) for k, v in new["histogram_ms"].items()
                },
            }
        )
    return {"generations": generations, "threshold": after["threshold"], "frozen": after["frozen"]}


def ratio(load: list[float], idle: list[float]) -> float:
    """p99 under load over p50 idle (0.0 without samples)."""
    if not load or not idle:
        return 0.0
    base = statistics.median(idle)  # as ``latency_ms`` reports it
    return round(percentile(load, 0.99) / base, 3) if base > 0 else 0.0


def figures(
    idle: dict[str, list[float]],
    load: dict[str, list[float]],
    gc_after: dict[str, Any],
) -> dict[str, Any]:
    """The issue's keys, and each side's latencies (``control``) in ms."""
    out: dict[str, Any] = {}
    for name in ("ws_cancel", "http_cancel", "status"):
        out[f"{name}_load_ratio"] = ratio(load[name], idle[name])
        out[f"{name}_p99_ms"] = round(percentile(load[name], 0.99) * 1000, 2)
    out["gc_pause_p99_ms"] = gc_after["pause_ms"]["p99"]
    out["control"] = {
        name: {"idle": latency_ms(idle[name]), "load": latency_ms(load[name])}
        for name in ("ws_cancel", "http_cancel", "status")
    }
    return out
