"""``python -m bench scheduler [--json] [--quick]``: the cron scheduler at scale (issue 27).

One run on a real store file in a temporary directory, the ``Scheduler``
actor with a runner that only notes when it was called (a session's start is
not part of these figures: the scheduler's own share is):

- ``fire_lateness_p99_ms``: with ``jobs`` active jobs (10,000), of which
  ``due`` (500) come due spread over a few seconds and the rest a day later:
  the runner's call minus the job's due time; baseline
  ``trio_sleep_lateness_p99_ms``: plain ``trio.sleep_until`` tasks for the
  same due times (``lateness_ratio``). Target: <= 50 ms.
- ``idle_job_bytes``: memory the scheduler holds per job at rest
  (tracemalloc, after start, divided by ``jobs``).
- ``scheduler_cpu_idle_pct``: process CPU over 5 s with every job a day away,
  in % of one core. Target: < 0.5.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import trio

from actors import ActorContext, open_system
from hermes.cron import CronDeps, RunOutcome, Scheduler
from hermes.store import cron_queries as q
from hermes.store import spawn_store
from hermes.store.cron_queries import CronJob

PERIOD = 86_400.0


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else 0.0


async def _measure(jobs: int, due: int, spread: float, idle_s: float) -> dict[str, Any]:
    late: list[float] = []
    done = trio.Event()

    async def runner(job: CronJob, prompt: str) -> RunOutcome:
        assert job.next_run_at is not None
        late.append(time.time() - (job.next_run_at - PERIOD))
        if len(late) >= due:
            done.set()
        return RunOutcome("ok")

    with tempfile.TemporaryDirectory(prefix="bench-cron-") as tmp:
        async with open_system("bench") as system:
            store = await spawn_store(system, Path(tmp), register=None)
            start = time.time() + 3.0 + jobs / 5000
            for i in range(jobs):
                when = start + (i % due) * spread / due if i < due else start + PERIOD
                row = CronJob(
                    id=f"job-{i:05d}", name=f"job {i}", schedule="every 1d", tz="UTC",
                    prompt="report", created_at=start, updated_at=start, next_run_at=when,
                )  # fmt: skip
                await store.request(q.SaveJob(row), timeout=30.0)

            def locate(ctx: ActorContext) -> CronDeps:
                return CronDeps(store, runner)

            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            await system.spawn(Scheduler(locate), name="cron", start_timeout=120.0)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
            with trio.fail_after(spread + 120):
                await done.wait()

            base: list[float] = []
            base_start = time.time() + 1.0

            async def sleeper(at: float) -> None:
                await trio.sleep_until(trio.current_time() + (at - time.time()))
                base.append(time.time() - at)

            async with trio.open_nursery() as nursery:
                for i in range(due):
                    nursery.start_soon(sleeper, base_start + i * spread / due)

            cpu0, wall0 = time.process_time(), time.perf_counter()
            await trio.sleep(idle_s)  # every job is a day away
            cpu = time.process_time() - cpu0
            wall = time.perf_counter() - wall0
    lateness = _p99(late) * 1000
    baseline = _p99(base) * 1000
    return {
        "jobs": jobs,
        "due": due,
        "fire_lateness_p99_ms": round(lateness, 2),
        "trio_sleep_lateness_p99_ms": round(baseline, 2),
        "lateness_ratio": round(lateness / baseline, 1) if baseline > 0 else None,
        "idle_job_bytes": round(held / jobs),
        "scheduler_cpu_idle_pct": round(100 * cpu / wall, 3),
    }


def render(figures: dict[str, Any]) -> str:
    width = max(len(k) for k in figures)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in figures.items())


def main(json_output: bool, quick: bool, reps: int) -> int:
    size = (500, 50, 2.0, 1.0) if quick else (10_000, 500, 5.0, 5.0)
    figures = trio.run(_measure, *size)
    print(json.dumps(figures) if json_output else render(figures))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.scheduler")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sys.exit(main(args.json, args.quick, 1))
