"""Sample the daemon from the outside: ``/proc`` (RSS, fds, threads, CPU) and its tree.

The daemon's own counts (trio tasks, actors) come from ``daemon.stats`` and
``tree.snapshot``.
"""

from __future__ import annotations

import time
from typing import Any

import attrs
import trio

from hermes.gateway.client import Client

from . import procfs


def proc_sample(pid: int) -> dict[str, float]:
    """RSS (MiB), open fds, threads and CPU seconds of ``pid`` now."""
    return {
        "t": time.monotonic(),
        "rss_mb": procfs.rss_bytes(pid) / 2**20,
        "fds": procfs.fd_count(pid),
        "threads": procfs.thread_count(pid),
        "cpu_s": procfs.process_cpu_seconds(pid),
    }


async def tree_stats(client: Client) -> dict[str, Any]:
    """Live actors, unkillable ones, and the sessions under ``/hermes/sessions/sup``."""
    snapshot = await client.call("tree.snapshot", timeout=60.0)
    sessions = 0
    top_restarts = 0
    for top in snapshot.get("children") or []:
        for child in top.get("children") or []:
            top_restarts += int(child.get("restarts", 0))
            if child.get("path", "").endswith("/sessions"):
                for sub in child.get("children") or []:
                    if sub.get("path", "").endswith("/sup"):
                        sessions = len(sub.get("children") or [])
    return {
        "actors": int(snapshot.get("actors", 0)),
        "unkillable": len(snapshot.get("unkillable") or []),
        "sessions_live": sessions,
        "top_restarts": top_restarts,
    }


@attrs.define
class Sampler:
    """``/proc`` samples of ``pid`` every ``interval`` seconds while ``run`` runs."""

    pid: int
    interval: float = 0.05
    samples: list[dict[str, float]] = attrs.field(factory=list)

    async def run(self) -> None:
        while True:
            self.samples.append(proc_sample(self.pid))
            await trio.sleep(self.interval)

    def peak_rss_mb(self, since: float = 0.0) -> float:
        return max((s["rss_mb"] for s in self.samples if s["t"] >= since), default=0.0)


def peak_rss_mb(pid: int) -> float:
    """The kernel's high-water mark of ``pid``'s RSS (``VmHWM``), in MiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0
