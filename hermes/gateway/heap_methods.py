"""``daemon.heap``: where the daemon's memory goes, for leak hunts (``tracemalloc``).

Tracing must be on from the start: run the daemon with ``PYTHONTRACEMALLOC=N``
(N frames per allocation). Each call answers the top allocation sites and how
each grew since the previous call, so two calls around a soak show what a
loop leaves behind.

Grouping a snapshot's traces by site is pure Python over every live allocation
(half a million on a daemon with the SDK loaded: seconds), so it runs in a
worker thread and the loop keeps serving; the snapshot is grouped once and only
the per-site totals are kept for the next call's growth, not the snapshot.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import attrs
import trio

from hermes.daemon.errors import RequestError

from .params import Method, Params

Site = tuple[str, int]
"""An allocation site: ``(file, line)`` of the allocation's newest frame."""

_IGNORED = (tracemalloc.__file__, "<frozen importlib._bootstrap>")
"""Sites that are the census's own or import machinery, left out of every answer."""


@attrs.frozen(slots=True)
class Census:
    """One snapshot grouped by site: ``sites`` maps a site to ``(size, count)``."""

    sites: dict[Site, tuple[int, int]]

    @classmethod
    def take(cls) -> Census:
        """Snapshot the traced heap and group it by site (slow: call it off the loop)."""
        snapshot = tracemalloc.take_snapshot()
        # The snapshot's raw traces, ``(domain, size, frames, total_nframe)`` with the newest
        # frame first, summed here: ``statistics("lineno")`` builds a Trace and a Traceback
        # object per allocation and takes ten times as long.
        traces = snapshot.traces
        raw: list[tuple[int, int, tuple[Site, ...], int]] = traces._traces  # type: ignore[attr-defined]
        sizes: dict[Site, int] = {}
        counts: dict[Site, int] = {}
        for _, size, frames, _ in raw:
            site = frames[0]
            sizes[site] = sizes.get(site, 0) + size
            counts[site] = counts.get(site, 0) + 1
        return cls({s: (sizes[s], counts[s]) for s in sizes if s[0] not in _IGNORED})

    def top(self, limit: int) -> list[dict[str, Any]]:
        """The ``limit`` biggest sites, biggest first."""
        ranked = sorted(self.sites.items(), key=lambda item: item[1][0], reverse=True)
        return [_site(site, size, count) for site, (size, count) in ranked[:limit]]

    def growth(self, previous: Census, limit: int) -> list[dict[str, Any]]:
        """The ``limit`` sites whose size changed most since ``previous``, largest change first."""
        changes = []
        for site in self.sites.keys() | previous.sites.keys():
            size, count = self.sites.get(site, (0, 0))
            old_size, old_count = previous.sites.get(site, (0, 0))
            changes.append((site, size, count, size - old_size, count - old_count))
        changes.sort(key=lambda change: abs(change[3]), reverse=True)
        return [
            {**_site(site, size, count), "size_diff": size_diff, "count_diff": count_diff}
            for site, size, count, size_diff, count_diff in changes[:limit]
        ]


def heap_methods() -> dict[str, Method]:
    """The ``daemon.heap`` entry of the method table (it keeps the previous census)."""
    previous: list[Census] = []
    busy = trio.Lock()  # one census at a time: each holds a copy of every trace

    async def heap(p: Params) -> Any:
        limit = p.opt_int("limit", 15, 1, 200)
        p.done()
        assert limit is not None
        if not tracemalloc.is_tracing():
            raise RequestError(
                "allocation tracing is off: start the daemon with PYTHONTRACEMALLOC=1 "
                "(or more frames) to use daemon.heap",
                "unavailable",
            )
        async with busy:
            census = await trio.to_thread.run_sync(Census.take)
            current, peak = tracemalloc.get_traced_memory()
            out: dict[str, Any] = {
                "traced_bytes": current,
                "peak_bytes": peak,
                "top": census.top(limit),
                "growth": census.growth(previous[0], limit) if previous else None,
            }
            previous[:] = [census]
        return out

    return {"daemon.heap": heap}


def _site(site: Site, size: int, count: int) -> dict[str, Any]:
    return {"file": site[0], "line": site[1], "size": size, "count": count}
