"""Scenario ``sessions``: N concurrent sessions x K turns, each turn with two tool calls.

Each turn is ``bench:tools``: a model call answering with ``read_file`` and
``terminal true``, the two tools, and a second model call answering
``done`` (two model calls per turn). Measured from this process while the
daemon (its own process) runs them:

- ``turns_per_s``, ``model_calls_per_s``: over the wall time of the whole load
  (model calls are the requests the fake provider saw end);
- ``turn_ms``: prompt sent to its ``turn.completed`` event, p50/p95/p99/max;
- ``cpu_ratio``: the daemon's CPU per turn (``/proc/<pid>/stat`` utime+stime
  over the load, divided by the turns) over the bare SDK's CPU for that
  turn's model calls: the same number of streamed calls with the very request
  bodies the daemon sent (recorded by the fake), made from this process with
  ``anthropic.AsyncAnthropic`` at the same concurrency right after, so
  ``cpu_ratio = daemon_cpu / bare_sdk_cpu`` for equal call counts. It prices
  everything the daemon does around a model call: sessions, tools and their
  processes, the store, events to the clients.
"""

from __future__ import annotations

import time
from typing import Any

from . import procfs
from .context import Context
from .driver import open_pool
from .figures import latency_ms
from .sdk import bare_cpu, load_bodies
from .sizes import Sizes
from .workload import Workload


def record_max(sizes: Sizes) -> int:
    """Bodies the fake records: every model call of session 0."""
    return 2 * sizes.turns


async def measure(ctx: Context) -> dict[str, Any]:
    run, sizes = ctx.run, ctx.sizes
    total = sizes.sessions * sizes.turns
    bar = ctx.progress.bar("sessions", total, "turns")
    ctx.provider.read()
    calls_before = ctx.provider.ended
    async with open_pool(run.endpoint, min(sizes.sessions, 8)) as pool:
        load = Workload(pool, sizes.sessions, sizes.turns, on_turn=bar.advance)
        cpu_before = procfs.process_cpu_seconds(run.pid)
        start = time.perf_counter()
        await load.run()
        wall = time.perf_counter() - start
        daemon_cpu = procfs.process_cpu_seconds(run.pid) - cpu_before
        bar.close()
        await load.close_all()
    ctx.provider.read()
    calls = ctx.provider.ended - calls_before
    turns = load.tally.answered
    bodies = load_bodies(run.record_dir)
    ctx.progress.say(f"bare SDK baseline: {calls} calls")
    sdk_cpu = await bare_cpu(run.provider_url, bodies, calls, sizes.sessions)
    per_turn = daemon_cpu / turns if turns else 0.0
    sdk_per_call = sdk_cpu / calls if calls else 0.0
    calls_per_turn = calls / turns if turns else 0.0
    ratio = per_turn / (sdk_per_call * calls_per_turn) if sdk_per_call and turns else 0.0
    tally = load.tally.as_dict()
    return {
        "figures": {
            "turns_per_s": round(turns / wall, 1) if wall else 0.0,
            "model_calls_per_s": round(calls / wall, 1) if wall else 0.0,
            "turn_ms": latency_ms(load.tally.latencies),
            "cpu_ratio": round(ratio, 3),
            "daemon_cpu_ms_per_turn": round(per_turn * 1000, 3),
            "sdk_cpu_ms_per_call": round(sdk_per_call * 1000, 3),
            "model_calls_per_turn": round(calls_per_turn, 3),
        },
        "invariants": {
            "every_prompt_answered": tally["answered"] == total and tally["lost"] == 0,
            "baseline_recorded": bool(bodies),
        },
        "details": {
            "wall_s": round(wall, 3),
            "turns": tally,
            "model_calls": calls,
            "daemon_cpu_s": round(daemon_cpu, 3),
            "sdk_cpu_s": round(sdk_cpu, 3),
            "recorded_bodies": len(bodies),
            "events_dropped": pool.dropped,
        },
        "samples": {"turn_ms": [round(s * 1000, 2) for s in load.tally.latencies]},
    }
