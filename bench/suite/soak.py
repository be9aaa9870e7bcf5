"""Scenario ``soak``: create, use and close sessions in a loop; the daemon must stay flat.

``soak_workers`` workers share ``soak_loops`` loops; each loop creates a
session, subscribes, runs one ``bench:tools`` turn (two model calls,
``read_file`` and a ``terminal true`` process) and closes it. The daemon's
RSS, open fds and threads (``/proc``), live actors (``tree.snapshot``) and trio
tasks (``daemon.stats``) are sampled about 200 times along the way (the series
in ``samples`` is what the report plots).

Flatness is judged on two quiet samples: one after the warm-up (the first
20 % of the loops) and one at the end, each taken with every worker paused
and the daemon idle for 0.5 s. A metric is flat when it grew by less than
5 %, or, for the counts (fds, threads, actors, trio tasks), by at most 2 (a
trio worker thread or a pooled connection coming or going). ``series_growth``
is the same comparison on the medians of the first and last tenth of the
samples taken after the warm-up, under load.
"""

from __future__ import annotations

import time
from typing import Any

import trio

from .context import Context
from .driver import Pool, Tally, open_pool, run_turn
from .figures import growth
from .progress import Bar
from .sampler import proc_sample, tree_stats
from .workload import close_session

WARMUP = 0.2
LIMIT = 0.05
COUNT_SLACK = 2
QUIET = 0.5
METRICS = ("rss_mb", "fds", "threads", "actors", "trio_tasks")


class Soak:
    def __init__(self, ctx: Context, pool: Pool, bar: Bar) -> None:
        self.ctx = ctx
        self.pool = pool
        self.bar = bar
        self.tally = Tally()
        self.started = 0
        self.done = 0
        self.samples: list[dict[str, float]] = []
        self.step = max(1, ctx.sizes.soak_loops // 200)
        self._due = trio.Event()

    async def loops(self, count: int) -> None:
        """Run ``count`` loops on the workers (returns when all of them are done)."""
        end = self.started + count

        async def worker() -> None:
            while self.started < end:
                index = self.started
                self.started += 1
                ref = await self.pool.session(index)
                self.tally.add(await run_turn(ref, f"bench:tools #k{index}"))
                await close_session(self.pool, ref)
                self.done += 1
                self.bar.advance()
                if self.done % self.step == 0:
                    self._due.set()

        async with trio.open_nursery() as nursery:
            for _ in range(self.ctx.sizes.soak_workers):
                nursery.start_soon(worker)

    async def sample(self, collect: bool = False) -> dict[str, float]:
        stats = await self.pool.client.call("daemon.stats", collect=collect)
        row = proc_sample(self.ctx.run.pid)
        tree = await tree_stats(self.pool.client)
        row.update(
            loops=self.done,
            actors=tree["actors"],
            trio_tasks=stats["trio_tasks"],
            sessions_live=tree["sessions_live"],
            marked=len(self.ctx.run.marked()),
        )
        return row

    async def sampler(self) -> None:
        while True:
            await self._due.wait()
            self._due = trio.Event()
            self.samples.append(await self.sample())

    async def quiet(self) -> dict[str, float]:
        """A sample with the daemon idle, after a full garbage collection in it."""
        await trio.sleep(QUIET)
        return await self.sample(collect=True)


def _flat(name: str, before: float, after: float) -> bool:
    if after <= before:
        return True
    if name != "rss_mb" and after - before <= COUNT_SLACK:
        return True
    return (after - before) / before < LIMIT if before else False


async def measure(ctx: Context) -> dict[str, Any]:
    sizes = ctx.sizes
    warm = max(1, int(sizes.soak_loops * WARMUP))
    bar = ctx.progress.bar("soak", sizes.soak_loops, "loops")
    async with open_pool(ctx.run.endpoint, min(sizes.soak_workers, 8)) as pool:
        soak = Soak(ctx, pool, bar)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(soak.sampler)
            start = time.perf_counter()
            await soak.loops(warm)
            baseline = await soak.quiet()
            mark = len(soak.samples)
            await soak.loops(sizes.soak_loops - warm)
            wall = time.perf_counter() - start
            final = await soak.quiet()
            nursery.cancel_scope.cancel()
        bar.close()
    after = soak.samples[mark:]
    start_t = soak.samples[0]["t"] if soak.samples else 0.0
    quiet_growth = {
        m: round((final[m] - baseline[m]) / baseline[m], 4) if baseline[m] else 0.0 for m in METRICS
    }
    flat = {m: _flat(m, baseline[m], final[m]) for m in METRICS}
    series_growth = {m: round(growth([s[m] for s in after], 0.0), 4) for m in METRICS}
    tally = soak.tally.as_dict()
    return {
        "figures": {
            "loops": soak.done,
            "loops_per_s": round(soak.done / wall, 1) if wall else 0.0,
            "growth": quiet_growth,
            "series_growth": series_growth,
            "end": {m: final[m] for m in (*METRICS, "sessions_live", "marked")},
        },
        "invariants": {
            **{f"{m}_flat": ok for m, ok in flat.items()},
            "every_prompt_answered": tally["answered"] == sizes.soak_loops,
            "no_session_left_running": final["sessions_live"] == 0,
            "no_tool_process_left": final["marked"] == 0,
        },
        "details": {
            "warmup_loops": warm,
            "baseline": baseline,
            "final": final,
            "turns": tally,
            "wall_s": round(wall, 2),
            "note": "trio task counts are not exposed by the daemon (docs/benchmarks.md)",
        },
        "samples": {
            "series": [
                {k: round(v, 3) for k, v in s.items() if k != "t"}
                | {"t": round(s["t"] - start_t, 3)}
                for s in soak.samples
            ],
            "warmup_index": mark,
        },
    }
