"""``python -m bench supervision``: restart latency and shutdown scaling of supervisors.

- ``restart_us``: median time from a child's crash to its replacement handling
  a message (sent through the child's stable handle). Baseline: a raw trio
  task that crashes, is caught by its parent loop and respawned, then handles
  a message, measured in the same run (``restart_ratio``, target <= 6).
- ``start_stop_scaling``: starting and stopping a supervisor of 10k children
  divided by the same for 1k (linear would be 10; target <= 12).
- ``dynamic_shutdown_ratio``: stopping a dynamic supervisor of 1k children
  that each take 50 ms to clean up, divided by 50 ms (target <= 3).
"""

from __future__ import annotations

import json
import logging
import statistics
import subprocess
import sys
import time
from typing import Any

import attrs
import trio
import trio.testing

from actors import Actor, ActorSystem, ExitReason, open_system, tune_gc
from supervisors import ChildSpec, DynamicSupervisor, Restart, Supervisor, SupervisorClient

from .stats import format_table, median_seconds, targets_met


@attrs.frozen
class Sizes:
    restarts: int = 300
    small: int = 1_000
    large: int = 10_000
    dynamic: int = 1_000
    cleanup: float = 0.05

    @classmethod
    def quick(cls) -> Sizes:
        return cls(restarts=20, small=20, large=200, dynamic=20, cleanup=0.01)


TARGETS: dict[str, tuple[str, float]] = {
    "restart_ratio": ("<=", 6.0),
    "start_stop_scaling": ("<=", 12.0),
    "dynamic_shutdown_ratio": ("<=", 3.0),
}


class Crashy(Actor):
    """Crashes on 'crash'; sets the shared event on 'ping'."""

    def __init__(self, pinged: list[trio.Event]) -> None:
        self.pinged = pinged

    async def receive(self, message: str) -> None:
        if message == "crash":
            raise RuntimeError("crash requested by the benchmark")
        self.pinged[0].set()


class Idle(Actor):
    async def receive(self, message: Any) -> Any:
        return message


class SlowStop(Actor):
    def __init__(self, cleanup: float) -> None:
        self.cleanup = cleanup

    async def receive(self, message: Any) -> Any:
        return message

    async def on_stop(self, reason: ExitReason) -> None:
        await trio.sleep(self.cleanup)


async def restart_pair(system: ActorSystem, n: int) -> tuple[float, float]:
    """Median seconds crash -> replacement handled a message; raw trio respawn baseline."""
    pinged = [trio.Event()]
    spec = ChildSpec("crashy", Crashy, args=(pinged,))
    sup = await system.spawn(Supervisor([spec], intensity=10**9, period=1.0))
    handle = await SupervisorClient(sup).child("crashy")
    samples = []
    for _ in range(n):
        old = handle.ref
        assert old is not None
        pinged[0] = trio.Event()
        start = time.perf_counter()
        await handle.cast("crash")
        await old.wait_exited()
        await handle.cast("ping")  # stashed until the replacement is up
        await pinged[0].wait()
        samples.append(time.perf_counter() - start)
    await sup.stop()

    raw_samples = []
    async with trio.open_nursery() as nursery:
        inbox_send, inbox_receive = trio.open_memory_channel[str](100)
        event = [trio.Event()]

        async def worker() -> None:
            async for message in inbox_receive:
                if message == "crash":
                    raise RuntimeError("crash")
                event[0].set()

        async def parent() -> None:
            while True:
                try:
                    await worker()
                except RuntimeError:
                    continue  # respawn in place: the cheapest possible "supervisor"

        nursery.start_soon(parent)
        for _ in range(n):
            event[0] = trio.Event()
            start = time.perf_counter()
            await inbox_send.send("crash")
            await inbox_send.send("ping")
            await event[0].wait()
            raw_samples.append(time.perf_counter() - start)
        nursery.cancel_scope.cancel()
    return statistics.median(samples), statistics.median(raw_samples)


async def start_stop(system: ActorSystem, n: int, reps: int) -> float:
    """Median seconds to start a supervisor of ``n`` idle children and stop it."""
    specs = [ChildSpec(f"c{i}", Idle) for i in range(n)]

    async def once() -> None:
        sup = await system.spawn(Supervisor(specs), start_timeout=600)
        reason = await sup.stop(timeout=600)
        assert reason.kind.value == "shutdown", reason

    return await median_seconds(once, reps)


async def raw_start_stop(n: int, reps: int) -> float:
    """Median seconds to start ``n`` raw trio tasks in a nursery and let them all finish."""

    async def child(go: trio.Event) -> None:
        await go.wait()

    async def once() -> None:
        go = trio.Event()
        async with trio.open_nursery() as nursery:
            for _ in range(n):
                nursery.start_soon(child, go)
            await trio.lowlevel.checkpoint()
            go.set()

    return await median_seconds(once, reps)


async def _scaling_probe(gc_mode: str, small: int, large: int, reps: int) -> dict[str, float]:
    """Start/stop scaling of a supervisor's children and of raw tasks, in this process."""
    if gc_mode == "tuned":
        tune_gc()
    async with open_system("scaling-probe", shutdown_timeout=600.0) as system:
        actors_small = await start_stop(system, small, reps)
        actors_large = await start_stop(system, large, reps)
    raw_small = await raw_start_stop(small, reps)
    raw_large = await raw_start_stop(large, reps)
    return {
        "actors_small_s": actors_small,
        "actors_large_s": actors_large,
        "actors_scaling": actors_large / actors_small,
        "raw_scaling": raw_large / raw_small,
    }


def scaling(gc_mode: str, sizes: Sizes, reps: int) -> dict[str, float]:
    """Run ``_scaling_probe`` in a fresh process (GC settings are process-wide)."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.supervision",
            "--scaling-probe",
            gc_mode,
            str(sizes.small),
            str(sizes.large),
            str(reps),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


async def dynamic_shutdown(system: ActorSystem, n: int, cleanup: float, reps: int) -> float:
    """Median seconds to stop a dynamic supervisor of ``n`` children with slow cleanup."""

    async def once() -> float:
        template = ChildSpec("slow", SlowStop, args=(cleanup,), restart=Restart.TEMPORARY)
        sup = await system.spawn(DynamicSupervisor(template))
        client = SupervisorClient(sup)
        for _ in range(n):
            await client.start_child()
        await trio.testing.wait_all_tasks_blocked()
        start = time.perf_counter()
        await sup.stop(timeout=600)
        return time.perf_counter() - start

    return await median_seconds(once, reps, warmup=0)


async def measure(sizes: Sizes, reps: int) -> dict[str, Any]:
    async with open_system("bench-supervision", shutdown_timeout=60.0) as system:
        restart, raw_restart = await restart_pair(system, sizes.restarts)
        dynamic = await dynamic_shutdown(system, sizes.dynamic, sizes.cleanup, reps)
    tuned = await trio.to_thread.run_sync(scaling, "tuned", sizes, reps)
    default = await trio.to_thread.run_sync(scaling, "default", sizes, reps)
    results: dict[str, Any] = {
        "restart_us": restart * 1e6,
        "restart_ratio": restart / raw_restart,
        "start_stop_scaling": tuned["actors_scaling"],
        "dynamic_shutdown_ratio": dynamic / sizes.cleanup,
        "details": {
            "raw_trio_respawn_us": raw_restart * 1e6,
            "scaling_tuned_gc": tuned,
            "scaling_default_gc": default,
            "dynamic_shutdown_s": dynamic,
            "sizes": attrs.asdict(sizes),
            "reps": reps,
        },
    }
    results["targets_met"] = targets_met(results, TARGETS)
    return results


def render(results: dict[str, Any]) -> str:
    d = results["details"]
    sizes = d["sizes"]
    met = results["targets_met"]
    tuned, default = d["scaling_tuned_gc"], d["scaling_default_gc"]
    rows = [
        (
            "restart_us",
            f"{results['restart_us']:.1f}",
            f"raw trio respawn {d['raw_trio_respawn_us']:.1f} us "
            f"(ratio {results['restart_ratio']:.2f})",
            "ratio <= 6",
            "yes" if met["restart_ratio"] else "NO",
        ),
        (
            "start_stop_scaling",
            f"{results['start_stop_scaling']:.2f}",
            f"{sizes['large']} children {tuned['actors_large_s']:.3f} s / "
            f"{sizes['small']} {tuned['actors_small_s']:.3f} s (tune_gc); "
            f"raw trio {tuned['raw_scaling']:.2f}",
            "<= 12",
            "yes" if met["start_stop_scaling"] else "NO",
        ),
        (
            "  default GC",
            f"{default['actors_scaling']:.2f}",
            f"raw trio tasks {default['raw_scaling']:.2f} (CPython's default thresholds)",
            "-",
            "-",
        ),
        (
            "dynamic_shutdown_ratio",
            f"{results['dynamic_shutdown_ratio']:.2f}",
            f"{sizes['dynamic']} children x {sizes['cleanup'] * 1000:.0f} ms cleanup: "
            f"{d['dynamic_shutdown_s'] * 1000:.1f} ms",
            "<= 3",
            "yes" if met["dynamic_shutdown_ratio"] else "NO",
        ),
    ]
    header = ("figure", "value", "measured", "target", "met")
    return format_table(header, rows) + f"\n(median of {d['reps']} repetitions)"


def main(json_output: bool, quick: bool, reps: int) -> int:
    results = trio.run(measure, Sizes.quick() if quick else Sizes(), reps)
    print(json.dumps(results, indent=2) if json_output else render(results))
    return 0


if __name__ == "__main__":
    # Internal: ``python -m bench.supervision --scaling-probe MODE SMALL LARGE REPS``.
    if len(sys.argv) == 6 and sys.argv[1] == "--scaling-probe":
        logging.basicConfig(level=logging.ERROR)
        mode, small, large, reps = sys.argv[2], *map(int, sys.argv[3:])
        print(json.dumps(trio.run(_scaling_probe, mode, small, large, reps)))
    else:
        sys.exit("usage: python -m bench supervision [--json] [--quick] [--reps N]")
