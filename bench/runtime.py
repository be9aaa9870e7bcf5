"""``python -m bench runtime``: the actor runtime against raw trio, side by side.

Each figure is the median of ``reps`` repetitions of an operation through the
actor runtime divided by (or, for throughput, relative to) the same operation
done with bare trio in the same run. Memory is measured in fresh
subprocesses so that one measurement cannot inherit another's heap.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio
import trio.testing

from actors import Actor, ActorSystem, MailboxConfig, open_system

from .stats import format_table, median_seconds, rss_bytes, targets_met


@attrs.frozen
class Sizes:
    """Workload sizes; ``quick()`` keeps the benchmark from rotting in tests."""

    spawn: int = 2_000
    memory: int = 10_000
    cast: int = 100_000
    call: int = 20_000
    cancel: int = 10_000
    buffer: int = 1_000

    @classmethod
    def quick(cls) -> Sizes:
        return cls(spawn=50, memory=200, cast=2_000, call=200, cancel=200, buffer=100)


TARGETS: dict[str, tuple[str, float]] = {
    "spawn_ratio": ("<=", 3.0),
    "memory_ratio": ("<=", 2.5),
    "cast_ratio": (">=", 0.5),
    "call_ratio": ("<=", 2.0),
    "cancel_ratio": ("<=", 2.0),
}


# -- actors used by the benchmark ------------------------------------------------------


class Idle(Actor):
    """Does nothing; stops when asked."""

    async def receive(self, message: Any) -> Any:
        return message


class Sink(Actor):
    """Counts casts and sets an event at the expected count."""

    def __init__(self, expected: int, done: trio.Event) -> None:
        self.expected = expected
        self.done = done
        self.seen = 0

    async def receive(self, message: Any) -> None:
        self.seen += 1
        if self.seen == self.expected:
            self.done.set()


class Owner(Actor):
    """Spawns ``n`` idle children on request."""

    shutdown_budget = 60.0

    async def receive(self, message: int) -> int:
        for _ in range(message):
            await self.ctx.spawn(Idle())
        return len(self.ctx.children())


# -- one measurement per figure ----------------------------------------------------------


async def spawn_pair(system: ActorSystem, n: int, reps: int) -> tuple[float, float]:
    """Per-op seconds: spawn + graceful stop of an actor; spawn + join of a raw task."""

    async def actors_run() -> None:
        for _ in range(n):
            ref = await system.spawn(Idle())
            await ref.stop()

    async with trio.open_nursery() as nursery:

        async def raw_task(go: trio.Event, done: trio.Event) -> None:
            await go.wait()
            done.set()

        async def raw_run() -> None:
            for _ in range(n):
                go, done = trio.Event(), trio.Event()
                nursery.start_soon(raw_task, go, done)
                await trio.lowlevel.checkpoint()
                go.set()
                await done.wait()

        raw = await median_seconds(raw_run, reps)
    actor = await median_seconds(actors_run, reps)
    return actor / n, raw / n


async def cast_pair(system: ActorSystem, n: int, buffer: int, reps: int) -> tuple[float, float]:
    """Messages per second: casts to one actor; raw memory channel, same buffer size."""

    async def actors_run() -> float:
        done = trio.Event()
        ref = await system.spawn(
            Sink(n, done), mailbox=MailboxConfig(capacity=buffer), shutdown=5.0
        )
        start = trio.current_time()
        for i in range(n):
            await ref.cast(i)
        await done.wait()
        elapsed = trio.current_time() - start
        await ref.stop()
        return elapsed

    async def raw_run() -> float:
        send, receive = trio.open_memory_channel[int](buffer)
        done = trio.Event()

        async def consumer() -> None:
            async with receive:
                seen = 0
                async for _ in receive:
                    seen += 1
                    if seen == n:
                        done.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(consumer)
            start = trio.current_time()
            async with send:
                for i in range(n):
                    await send.send(i)
                await done.wait()
            return trio.current_time() - start

    actor = await median_seconds(actors_run, reps)
    raw = await median_seconds(raw_run, reps)
    return n / actor, n / raw


async def call_pair(system: ActorSystem, n: int, reps: int) -> tuple[float, float]:
    """Seconds per round trip: ``call`` to an actor; raw ping-pong over two channels."""
    ref = await system.spawn(Idle())

    async def actors_run() -> None:
        for i in range(n):
            await ref.call(i)

    async def raw_run() -> None:
        ping_send, ping_receive = trio.open_memory_channel[int](0)
        pong_send, pong_receive = trio.open_memory_channel[int](0)

        async def server() -> None:
            async with ping_receive, pong_send:
                async for value in ping_receive:
                    await pong_send.send(value)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(server)
            async with ping_send:
                for i in range(n):
                    await ping_send.send(i)
                    await pong_receive.receive()

    actor = await median_seconds(actors_run, reps)
    raw = await median_seconds(raw_run, reps)
    await ref.stop()
    return actor / n, raw / n


async def cancel_pair(system: ActorSystem, n: int, reps: int) -> tuple[float, float]:
    """Seconds to hard-cancel ``n`` idle actors under one owner; ``n`` raw tasks in a nursery."""

    async def actors_run() -> float:
        owner = await system.spawn(Owner())
        assert await owner.call(n, timeout=120) == n
        await trio.testing.wait_all_tasks_blocked()
        start = trio.current_time()
        await owner.kill()
        return trio.current_time() - start

    async def raw_run() -> float:
        async with trio.open_nursery() as nursery:
            for _ in range(n):
                nursery.start_soon(trio.sleep_forever)
            await trio.testing.wait_all_tasks_blocked()
            start = trio.current_time()
            nursery.cancel_scope.cancel()
        return trio.current_time() - start

    actor = await median_seconds(actors_run, reps)
    raw = await median_seconds(raw_run, reps)
    return actor, raw


# -- memory, in fresh processes -----------------------------------------------------------


async def _memory_probe(kind: str, n: int) -> int:
    """Bytes of RSS per idle actor (kind 'actors') or idle raw task (kind 'raw')."""
    gc.collect()
    if kind == "raw":
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep_forever)  # warm the task machinery
            await trio.testing.wait_all_tasks_blocked()
            before = rss_bytes()
            for _ in range(n):
                nursery.start_soon(trio.sleep_forever)
            await trio.testing.wait_all_tasks_blocked()
            gc.collect()
            after = rss_bytes()
            nursery.cancel_scope.cancel()
        return (after - before) // n
    async with open_system("memory-probe") as system:
        warm = await system.spawn(Idle())
        await trio.testing.wait_all_tasks_blocked()
        before = rss_bytes()
        for _ in range(n):
            await system.spawn(Idle())
        await trio.testing.wait_all_tasks_blocked()
        gc.collect()
        after = rss_bytes()
        await warm.stop()
        for ref in system.top_level():
            await ref.kill()
    return (after - before) // n


def memory_pair(n: int, reps: int) -> tuple[float, float]:
    """Median bytes per idle actor and per idle raw task, each from ``reps`` fresh processes."""
    import statistics

    def probe(kind: str) -> float:
        samples = []
        for _ in range(reps):
            out = subprocess.run(
                [sys.executable, "-m", "bench.runtime", "--memory-probe", kind, str(n)],
                check=True,
                capture_output=True,
                text=True,
            )
            samples.append(int(out.stdout.strip()))
        return statistics.median(samples)

    return probe("actors"), probe("raw")


# -- the whole benchmark --------------------------------------------------------------------


async def measure(sizes: Sizes, reps: int) -> dict[str, Any]:
    """Run every pair and return figures, raw numbers and targets."""
    results: dict[str, Any] = {}
    async with open_system("bench", shutdown_timeout=60.0) as system:
        steps: list[tuple[str, Callable[[], Awaitable[tuple[float, float]]]]] = [
            ("spawn", lambda: spawn_pair(system, sizes.spawn, reps)),
            ("cast", lambda: cast_pair(system, sizes.cast, sizes.buffer, reps)),
            ("call", lambda: call_pair(system, sizes.call, reps)),
            ("cancel", lambda: cancel_pair(system, sizes.cancel, reps)),
        ]
        raw_numbers: dict[str, tuple[float, float]] = {}
        for name, step in steps:
            raw_numbers[name] = await step()
    raw_numbers["memory"] = await trio.to_thread.run_sync(memory_pair, sizes.memory, reps)

    spawn_a, spawn_r = raw_numbers["spawn"]
    cast_a, cast_r = raw_numbers["cast"]
    call_a, call_r = raw_numbers["call"]
    cancel_a, cancel_r = raw_numbers["cancel"]
    mem_a, mem_r = raw_numbers["memory"]
    results["spawn_ratio"] = spawn_a / spawn_r
    results["memory_ratio"] = mem_a / mem_r
    results["cast_ratio"] = cast_a / cast_r
    results["call_ratio"] = call_a / call_r
    results["cancel_ratio"] = cancel_a / cancel_r
    results["details"] = {
        "spawn_stop_us": {"actors": spawn_a * 1e6, "raw_trio": spawn_r * 1e6},
        "bytes_per_idle": {"actors": mem_a, "raw_trio": mem_r},
        "cast_msgs_per_s": {"actors": cast_a, "raw_trio": cast_r},
        "call_round_trip_us": {"actors": call_a * 1e6, "raw_trio": call_r * 1e6},
        "cancel_all_ms": {"actors": cancel_a * 1e3, "raw_trio": cancel_r * 1e3},
        "sizes": attrs.asdict(sizes),
        "reps": reps,
    }
    results["targets_met"] = targets_met(results, TARGETS)
    return results


def render(results: dict[str, Any]) -> str:
    """The human-readable table."""
    details = results["details"]
    rows = [
        ("spawn_ratio", "spawn + stop (us)", *details["spawn_stop_us"].values()),
        ("memory_ratio", "bytes per idle", *details["bytes_per_idle"].values()),
        ("cast_ratio", "msgs/s", *details["cast_msgs_per_s"].values()),
        ("call_ratio", "round trip (us)", *details["call_round_trip_us"].values()),
        (
            "cancel_ratio",
            f"cancel {details['sizes']['cancel']} (ms)",
            *details["cancel_all_ms"].values(),
        ),
    ]
    table = [
        (
            key,
            what,
            actors,
            raw,
            results[key],
            f"{TARGETS[key][0]} {TARGETS[key][1]:g}",
            "yes" if results["targets_met"][key] else "NO",
        )
        for key, what, actors, raw in rows
    ]
    header = ("figure", "measure", "actors", "raw trio", "ratio", "target", "met")
    return format_table(header, table) + f"\n(median of {details['reps']} repetitions)"


def main(json_output: bool, quick: bool, reps: int) -> int:
    """Entry point used by ``python -m bench runtime``."""
    sizes = Sizes.quick() if quick else Sizes()
    results = trio.run(measure, sizes, reps)
    if json_output:
        print(json.dumps(results, indent=2))
    else:
        print(render(results))
    return 0


if __name__ == "__main__":
    # Internal: ``python -m bench.runtime --memory-probe KIND N`` prints bytes per idle unit.
    if len(sys.argv) == 4 and sys.argv[1] == "--memory-probe":
        print(trio.run(_memory_probe, sys.argv[2], int(sys.argv[3])))
    else:
        sys.exit("usage: python -m bench runtime [--json] [--quick] [--reps N]")
