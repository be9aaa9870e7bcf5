"""Small helpers shared by the benchmarks: repetition, medians, process memory, tables."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import trio


async def median_seconds(
    run: Callable[[], Awaitable[float | None]], reps: int, warmup: int = 1
) -> float:
    """Median duration of ``reps`` runs after ``warmup`` runs.

    ``run`` may return its own measured duration (to exclude set-up); otherwise
    the whole call is timed.
    """
    for _ in range(warmup):
        await run()
    samples = []
    for _ in range(reps):
        gc.collect()  # each repetition starts without the previous one's garbage
        start = time.perf_counter()
        measured = await run()
        samples.append(measured if measured is not None else time.perf_counter() - start)
        await trio.lowlevel.checkpoint()
    return statistics.median(samples)


def targets_met(results: dict[str, Any], targets: dict[str, tuple[str, float]]) -> dict[str, bool]:
    """For each ``key: (op, bound)`` target, whether ``results[key]`` meets it."""
    return {
        key: results[key] <= bound if op == "<=" else results[key] >= bound
        for key, (op, bound) in targets.items()
    }


def rss_bytes() -> int:
    """Resident set size of this process, from /proc."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("VmRSS not found in /proc/self/status")


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain fixed-width table."""
    cells = [[str(h) for h in headers]] + [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


FIGURE_HEADERS = ("figure", "value", "measured", "target", "met")


def figures_table(rows: Sequence[Sequence[object]], problems: Sequence[str]) -> str:
    """The figures table of a benchmark, with the broken invariants listed under it."""
    table = format_table(FIGURE_HEADERS, rows)
    if problems:
        table += "\n\nPROBLEMS:\n" + "\n".join(f"- {p}" for p in problems)
    return table


def report(results: dict[str, Any], render: Callable[[dict[str, Any]], str], as_json: bool) -> int:
    """Print ``results`` (JSON, or ``render``ed); exit status 1 if an invariant broke."""
    import json

    print(json.dumps(results, indent=2, default=str) if as_json else render(results))
    return 1 if results["problems"] else 0
