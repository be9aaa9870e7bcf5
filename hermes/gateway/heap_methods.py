"""``daemon.heap``: where the daemon's memory goes, for leak hunts (``tracemalloc``).

Tracing must be on from the start: run the daemon with ``PYTHONTRACEMALLOC=N``
(N frames per allocation). Each call answers the top allocation sites and how
each grew since the previous call, so two calls around a soak show what a
loop leaves behind. A snapshot holds the loop for a moment (tens to hundreds of
milliseconds on a big heap): a debugging tool, not a health check.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

from hermes.daemon.errors import RequestError

from .params import Method, Params

_IGNORED = (
    tracemalloc.Filter(False, tracemalloc.__file__),
    tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
)


def heap_methods() -> dict[str, Method]:
    """The ``daemon.heap`` entry of the method table (it keeps the previous snapshot)."""
    previous: list[tracemalloc.Snapshot] = []

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
        snapshot = tracemalloc.take_snapshot().filter_traces(_IGNORED)
        current, peak = tracemalloc.get_traced_memory()
        out: dict[str, Any] = {
            "traced_bytes": current,
            "peak_bytes": peak,
            "top": [
                _site(s.traceback, s.size, s.count) for s in snapshot.statistics("lineno")[:limit]
            ],
            "growth": None,
        }
        if previous:
            diffs = snapshot.compare_to(previous[0], "lineno")[:limit]
            out["growth"] = [
                {
                    **_site(d.traceback, d.size, d.count),
                    "size_diff": d.size_diff,
                    "count_diff": d.count_diff,
                }
                for d in diffs
            ]
        previous[:] = [snapshot]
        return out

    return {"daemon.heap": heap}


def _site(traceback: tracemalloc.Traceback, size: int, count: int) -> dict[str, Any]:
    frame = traceback[0]
    return {"file": frame.filename, "line": frame.lineno, "size": size, "count": count}
