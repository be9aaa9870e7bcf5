"""How long the cyclic collector stops the world: a histogram fed by ``gc.callbacks``.

A collection runs on whatever thread allocates past the threshold, in the
middle of whatever task runs, and nothing else on the event loop moves until
it ends: under load its pause is part of every latency. ``GcPauses.install()``
times each collection (the ``start`` and ``stop`` callbacks, ``perf_counter``)
and keeps, per generation, a count and a histogram over fixed bounds, plus the
last ``recent`` pauses for exact percentiles. ``snapshot()`` is plain data (for
``daemon.stats``), and each pause's CPU time beside its wall time. The callbacks
cost about a microsecond a collection.
"""

from __future__ import annotations

import gc
import time
from collections import deque
from typing import Any

BOUNDS_MS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
"""Upper bounds of the histogram's buckets; one more bucket holds the rest."""


class GcPauses:
    """Pause histogram of the cyclic collector (see the module docstring)."""

    def __init__(self, recent: int = 4096) -> None:
        if recent < 1:
            raise ValueError(f"recent must be >= 1, got {recent!r}")
        self.counts = [0, 0, 0]
        """Collections per generation."""
        self.buckets = [[0] * (len(BOUNDS_MS) + 1) for _ in range(3)]
        self.total_ms = [0.0, 0.0, 0.0]
        self.max_ms = [0.0, 0.0, 0.0]
        self.collected = 0
        """Objects the collections found unreachable and freed."""
        self.recent: deque[float] = deque(maxlen=recent)
        """The last pauses, in ms, every generation."""
        self.recent_cpu: deque[float] = deque(maxlen=recent)
        """The same pauses' CPU time (``thread_time``), in ms: the wall time above less
        what the OS took away meanwhile (on a loaded machine, most of a long pause)."""
        self._started: float | None = None
        self._started_cpu = 0.0
        self._installed = False

    def install(self) -> GcPauses:
        """Start timing collections (idempotent); returns self."""
        if not self._installed:
            gc.callbacks.append(self._callback)
            self._installed = True
        return self

    def uninstall(self) -> None:
        """Stop timing collections (idempotent)."""
        if self._installed:
            gc.callbacks.remove(self._callback)
            self._installed = False

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started_cpu = time.thread_time()
            self._started = time.perf_counter()
            return
        started, self._started = self._started, None
        if started is None:
            return
        wall = (time.perf_counter() - started) * 1000.0
        self.recent_cpu.append((time.thread_time() - self._started_cpu) * 1000.0)
        self.record(int(info.get("generation", 0)), wall)
        self.collected += int(info.get("collected", 0))

    def record(self, generation: int, ms: float) -> None:
        """Count one pause of ``ms`` milliseconds in ``generation`` (0-2)."""
        generation = min(max(generation, 0), 2)
        self.counts[generation] += 1
        self.total_ms[generation] += ms
        if ms > self.max_ms[generation]:
            self.max_ms[generation] = ms
        bucket = next((i for i, bound in enumerate(BOUNDS_MS) if ms <= bound), len(BOUNDS_MS))
        self.buckets[generation][bucket] += 1
        self.recent.append(ms)

    def percentile(self, q: float, cpu: bool = False) -> float:
        """The ``q`` quantile (0-1) of the recent pauses (their CPU time if ``cpu``), in
        ms (0.0 before any)."""
        samples = self.recent_cpu if cpu else self.recent
        if not samples:
            return 0.0
        ordered = sorted(samples)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def snapshot(self) -> dict[str, Any]:
        """Plain data: per generation count, total, max, histogram; recent p50/p99/max."""
        labels = [f"<={b:g}" for b in BOUNDS_MS] + [f">{BOUNDS_MS[-1]:g}"]
        return {
            "collections": sum(self.counts),
            "collected": self.collected,
            "pause_ms": {
                "p50": round(self.percentile(0.5), 3),
                "p99": round(self.percentile(0.99), 3),
                "max": round(max(self.recent, default=0.0), 3),
                "n": len(self.recent),
            },
            "pause_cpu_ms": {
                "p50": round(self.percentile(0.5, cpu=True), 3),
                "p99": round(self.percentile(0.99, cpu=True), 3),
                "max": round(max(self.recent_cpu, default=0.0), 3),
                "n": len(self.recent_cpu),
            },
            "generations": [
                {
                    "generation": g,
                    "collections": self.counts[g],
                    "total_ms": round(self.total_ms[g], 3),
                    "max_ms": round(self.max_ms[g], 3),
                    "histogram_ms": dict(zip(labels, self.buckets[g], strict=True)),
                }
                for g in range(3)
            ],
            "threshold": list(gc.get_threshold()),
            "frozen": gc.get_freeze_count(),
        }


_process: GcPauses | None = None


def gc_pauses() -> GcPauses:
    """The process-wide recorder (the collector is process-wide), installed on first use."""
    global _process
    if _process is None:
        _process = GcPauses().install()
    return _process
