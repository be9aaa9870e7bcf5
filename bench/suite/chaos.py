"""Scenario ``chaos``: crash random actors while the sessions workload runs; nothing is lost.

N sessions run K turns each, cycling through three prompts that keep
crashable actors alive: ``bench:slowtools`` (tool workers running ``sleep
0.2`` and ``read_file``), ``bench:bg`` (a background ``sleep 1``: a process
watcher) and ``bench:chaosfan 2`` (two subagents, each running ``sleep 0.2``).
After each turn a session's user thinks for ``THINK`` seconds (the daemon is
configured to review after every turn, with no idle delay, and the fake
answers reviews after ``AUX_DELAY``: reviewers live meanwhile), and after
every third turn asks
for ``session.compress`` (a compressor lives while the fake writes the
summary). A daemon without reviews or ``session.compress`` still runs the
scenario; the missing kinds are listed.

Meanwhile, up to ``chaos_rate`` times a second (a ``tree.snapshot`` of a big
tree under load takes a while; ``crashes`` says how many happened), the
benchmark reads the tree
(``tree.snapshot``), picks a kind at random among those present, then one
actor of that kind, and kills it with ``actor.cancel`` (what a crash looks
like to its supervisor). Kinds, by actor class: tool workers
(``ToolWorker``), watchers (``ProcessWatcher``), subagents
(``SubagentRunner``), compressors and reviewers (classes named
``*Compressor*`` / ``*Review*``; absent from a daemon that has none yet:
listed under ``details.kinds_absent``).

At the end (all sessions closed, 0.5 s of quiet) the invariants: every
accepted prompt has an answer or a recorded failure (a ``turn.completed``
with any reason; none ``lost``); the daemon's top-level actors never
restarted (no supervisor gave up and escalated), no actor is unkillable and
no session is left running; the daemon's threads are back to where they
started (within 2, waiting up to 15 s: trio keeps an idle worker thread for
10 s) and none of its processes survive; after the graceful
stop every transcript in the database is valid (``run.py``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import trio

from hermes.gateway.client import GatewayError

from . import procfs
from .context import Context
from .driver import Pool, SessionRef, open_pool
from .figures import latency_ms
from .sampler import tree_stats
from .workload import Workload

KINDS: dict[str, Callable[[str], bool]] = {
    "tool_worker": lambda cls: cls == "ToolWorker",
    "watcher": lambda cls: cls == "ProcessWatcher",
    "subagent": lambda cls: cls == "SubagentRunner",
    "compressor": lambda cls: "Compressor" in cls,
    "reviewer": lambda cls: "Review" in cls,
}
_PROMPTS = ("bench:slowtools", "bench:bg", "bench:chaosfan 2")
THREAD_SLACK = 2
THREAD_IDLE = 15.0
THINK = 0.3
CONFIG = {
    "review": {"enabled": True, "interval": 1, "idle_delay": 0.0},
    "compression": {"tail_ratio": 0.01, "protect_first": 1, "protect_last": 2},
}
AUX_DELAY = 0.3


class Compressions:
    """``session.compress`` after every third turn, while the daemon has it."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.supported = True

    async def after_turn(self, ref: SessionRef, turn: int) -> None:
        await trio.sleep(THINK)
        if turn % 3 != 2 or not self.supported:
            return
        try:
            await ref.call("session.compress", timeout=60.0)
            self.outcomes["ok"] += 1
        except GatewayError as exc:
            if exc.code in ("unknown_method", "invalid_params"):
                self.supported = False
            self.outcomes[exc.code] += 1


def chaos_prompt(index: int, turn: int) -> str:
    return f"{_PROMPTS[(index + turn) % len(_PROMPTS)]} #c{index} turn {turn}"


def _candidates(snapshot: dict[str, Any]) -> tuple[dict[str, list[str]], int]:
    """Running actors of each kind, and the restarts the tree's live actors went through."""
    found: dict[str, list[str]] = {kind: [] for kind in KINDS}
    restarts = 0

    def walk(node: dict[str, Any]) -> None:
        nonlocal restarts
        restarts += int(node.get("restarts", 0))
        cls = str(node.get("class", ""))
        if node.get("state") == "running":
            for kind, test in KINDS.items():
                if test(cls):
                    found[kind].append(node["path"])
        for child in node.get("children") or []:
            walk(child)

    for top in snapshot.get("children") or []:
        walk(top)
    return found, restarts


class Monkey:
    """Kills one random actor of a random kind every ``1 / rate`` seconds."""

    def __init__(self, ctx: Context, pool: Pool) -> None:
        self.ctx = ctx
        self.pool = pool
        self.crashed: Counter[str] = Counter()
        self.raced: Counter[str] = Counter()
        self.seen: Counter[str] = Counter()
        self.kill_ms: list[float] = []
        self.restarts = 0
        """The most restarts seen at once in the live tree."""

    async def run(self) -> None:
        period = 1.0 / self.ctx.sizes.chaos_rate
        rng = self.ctx.rng
        next_at = trio.current_time()
        while True:
            next_at += period
            await trio.sleep_until(max(next_at, trio.current_time()))
            snapshot = await self.pool.client.call("tree.snapshot", timeout=60.0)
            candidates, restarts = _candidates(snapshot)
            self.restarts = max(self.restarts, restarts)
            found = {k: v for k, v in candidates.items() if v}
            for kind in found:
                self.seen[kind] += 1
            if not found:
                continue
            kind = rng.choice(sorted(found))
            path = rng.choice(found[kind])
            start = time.perf_counter()
            try:
                await self.pool.client.call("actor.cancel", path=path)
            except Exception:  # it ended between the snapshot and the kill
                self.raced[kind] += 1
                continue
            self.kill_ms.append(time.perf_counter() - start)
            self.crashed[kind] += 1


async def _threads_settle(pid: int, bound: int) -> float:
    """Wait (up to ``THREAD_IDLE``) for idle worker threads to exit; the seconds waited.

    Trio keeps an idle ``to_thread`` worker for 10 s before it exits, so a
    thread count taken right after a busy spell is not yet back.
    """
    start = trio.current_time()
    for _ in range(int(THREAD_IDLE / 0.5)):
        if procfs.thread_count(pid) <= bound:
            break
        await trio.sleep(0.5)
    return trio.current_time() - start


async def measure(ctx: Context) -> dict[str, Any]:
    sizes = ctx.sizes
    total = sizes.sessions * sizes.turns
    bar = ctx.progress.bar("chaos", total, "turns")
    async with open_pool(ctx.run.endpoint, min(sizes.sessions, 8)) as pool:
        await trio.sleep(0.2)
        threads_before = procfs.thread_count(ctx.run.pid)
        tree_before = await tree_stats(pool.client)
        compress = Compressions()
        load = Workload(
            pool,
            sizes.sessions,
            sizes.turns,
            chaos_prompt,
            on_turn=bar.advance,
            after_turn=compress.after_turn,
        )
        monkey = Monkey(ctx, pool)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(monkey.run)
            await load.run()
            nursery.cancel_scope.cancel()
        bar.close()
        await load.close_all()
        await trio.sleep(0.5)
        tree_after = await tree_stats(pool.client)
        threads_waited = await _threads_settle(ctx.run.pid, threads_before + THREAD_SLACK)
        threads_after = procfs.thread_count(ctx.run.pid)
        left = ctx.run.marked()
        zombies = procfs.zombie_children(ctx.run.pid)
    tally = load.tally.as_dict()
    crashes = sum(monkey.crashed.values())
    return {
        "figures": {
            "crashes": crashes,
            "crashes_by_kind": dict(monkey.crashed),
            "answered": tally["answered"],
            "failed_recorded": tally["failed_recorded"],
            "actor_cancel_ms": latency_ms(monkey.kill_ms),
        },
        "invariants": {
            "every_prompt_answered_or_failed": tally["lost"] == 0 and tally["accepted"] == total,
            "crashes_happened": crashes > 0,
            "no_escalation": tree_after["top_restarts"] == tree_before["top_restarts"],
            "no_unkillable_actor": tree_after["unkillable"] == 0,
            "no_session_left_running": tree_after["sessions_live"] == 0,
            "no_actor_leaked": tree_after["actors"] <= tree_before["actors"],
            "no_process_leaked": not left and not zombies,
            "threads_back": threads_after <= threads_before + THREAD_SLACK,
        },
        "details": {
            "turns": tally,
            "raced": dict(monkey.raced),
            "compress": dict(compress.outcomes),
            "restarts_seen": monkey.restarts,
            "kinds_seen": dict(monkey.seen),
            "kinds_absent": [k for k in KINDS if not monkey.seen[k]],
            "actors": {"before": tree_before["actors"], "after": tree_after["actors"]},
            "threads": {
                "before": threads_before,
                "after": threads_after,
                "waited_s": round(threads_waited, 1),
            },
            "processes_left": len(left),
            "zombies": len(zombies),
            "events_dropped": pool.dropped,
        },
        "samples": {},
    }
