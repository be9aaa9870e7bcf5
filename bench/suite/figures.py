"""Small numeric helpers: latency percentiles and growth after warm-up."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0..1) of ``values`` (0.0 when empty)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def latency_ms(seconds: Sequence[float]) -> dict[str, Any]:
    """``{n, p50, p95, p99, max}`` in milliseconds of samples given in seconds."""
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50": round(statistics.median(ms), 2) if ms else 0.0,
        "p95": round(percentile(ms, 0.95), 2),
        "p99": round(percentile(ms, 0.99), 2),
        "max": round(max(ms), 2) if ms else 0.0,
    }


def growth(values: Sequence[float], warmup: float = 0.2, window: float = 0.1) -> float:
    """Relative growth after warm-up: the median of the last ``window`` of the samples over
    the median of the first ``window`` after the first ``warmup`` of them (0.0 = flat)."""
    n = len(values)
    if n < 4:
        return 0.0
    start = min(n - 2, int(n * warmup))
    width = max(1, int(n * window))
    base = statistics.median(values[start : start + width])
    end = statistics.median(values[-width:])
    if base == 0:
        return 0.0 if end == 0 else float("inf")
    return (end - base) / base
