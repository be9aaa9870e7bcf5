"""Scenario ``fanout``: S sessions x C subagents each, and what idle sessions and subagents cost.

Three phases against one daemon, after a warm-up session that delegated once:

1. ``idle_session_kb``: ``idle_sessions`` sessions each run one plain turn and
   are left idle (no subscription); the daemon's RSS growth divided by their
   number (after 0.5 s of quiet before and after).
2. ``idle_subagent_kb``: ``min(S, 21)`` of those sessions each delegate
   ``min(C, 3)`` subagents (the daemon's default per-parent concurrency is 3,
   and 64 in all) whose model request the fake never answers: each subagent
   is then a runner, a child session, its turn and one open HTTP request,
   with nothing to do. RSS growth once every request has reached the fake,
   divided by their number. The parents are then cancelled.
3. ``completion_s``: S fresh sessions each delegate C tasks at once (queued
   3 at a time per parent by the daemon); each child answers at once. Time
   from the first prompt to the last parent's ``turn.completed``, and the
   peak RSS meanwhile (``/proc`` sampled every 20 ms; ``details`` also has
   the kernel's ``VmHWM``). Every child must report ``completed``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import trio

from . import procfs
from .context import Context
from .driver import Pool, SessionRef, matches, open_pool, run_turn
from .progress import Bar
from .sampler import Sampler, peak_rss_mb, tree_stats
from .workload import close_session

T = TypeVar("T")
MAX_PARKED_PARENTS = 21
PER_PARENT = 3
QUIET = 0.5


async def _quiet_rss(ctx: Context) -> float:
    await trio.sleep(QUIET)
    return procfs.rss_bytes(ctx.run.pid) / 1024


async def _in_batches(
    items: Sequence[T], fn: Callable[[T], Awaitable[object]], width: int = 8
) -> None:
    """``fn(item)`` for every item, ``width`` at a time."""
    limiter = trio.CapacityLimiter(width)

    async def one(item: T) -> None:
        async with limiter:
            await fn(item)

    async with trio.open_nursery() as nursery:
        for item in items:
            nursery.start_soon(one, item)


async def _idle_sessions(ctx: Context, pool: Pool, count: int, bar: Bar) -> list[str]:
    ids: dict[int, str] = {}

    async def one(i: int) -> None:
        ref = await pool.session(i)
        turn = await run_turn(ref, f"bench:plain #i{i}")
        if turn.reason != "completed":
            raise RuntimeError(f"idle session {ref.id}: turn {turn.reason}")
        await pool.forget(ref)
        ids[i] = ref.id
        bar.advance()

    await _in_batches(list(range(count)), one)
    return [ids[i] for i in range(count)]


async def _parked(ctx: Context, pool: Pool, ids: list[str]) -> tuple[int, float]:
    """Delegate subagents that never get an answer; (how many, RSS KiB once all wait)."""
    per = min(ctx.sizes.subagents, PER_PARENT)
    parents = [await pool.follow(sid, i) for i, sid in enumerate(ids)]
    expected: list[tuple[str, int]] = []
    for i in range(len(parents)):
        for j in range(per):
            tag = f"i{i}-{j}"
            expected.append((tag, len(ctx.provider.opened[tag]) + 1))
    turns = []
    for i, ref in enumerate(parents):
        accepted = await ref.call("prompt.submit", text=f"bench:park {per} #i{i}")
        turns.append(int(accepted["turn"]))
    with trio.fail_after(60):
        for tag, count in expected:
            await ctx.provider.wait_opened(tag, count)
    rss = await _quiet_rss(ctx)
    await _in_batches(list(zip(parents, turns, strict=True)), _cancel)
    for ref in parents:
        await pool.forget(ref)
    return len(expected), rss


async def _cancel(item: tuple[SessionRef, int]) -> None:
    ref, turn = item
    await ref.call("cancel", timeout=60.0)
    with trio.fail_after(60):
        await ref.feed.wait(matches("turn.completed", turn=turn))


async def _fanout(ctx: Context, pool: Pool, bar: Bar) -> dict[str, Any]:
    sizes = ctx.sizes
    refs = [await pool.session(1000 + i) for i in range(sizes.fanout_sessions)]
    statuses: dict[str, int] = {}
    reasons: dict[str, int] = {}

    async def one(i: int, ref: SessionRef) -> None:
        turn = await run_turn(ref, f"bench:fanout {sizes.subagents} #f{i}", timeout=600.0)
        reasons[turn.reason] = reasons.get(turn.reason, 0) + 1
        for event in ref.feed.events:
            if event["type"] == "subagent.finished":
                status = event["payload"].get("status", "?")
                statuses[status] = statuses.get(status, 0) + 1
        bar.advance(sizes.subagents)

    sampler = Sampler(ctx.run.pid, 0.02)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sampler.run)
        start = time.perf_counter()
        async with trio.open_nursery() as inner:
            for i, ref in enumerate(refs):
                inner.start_soon(one, i, ref)
        seconds = time.perf_counter() - start
        nursery.cancel_scope.cancel()
    await _in_batches(refs, lambda ref: close_session(pool, ref))
    return {
        "seconds": seconds,
        "peak_rss_mb": sampler.peak_rss_mb(),
        "statuses": statuses,
        "reasons": reasons,
    }


async def measure(ctx: Context) -> dict[str, Any]:
    sizes = ctx.sizes
    idle_count = sizes.idle_sessions
    parked_parents = min(sizes.fanout_sessions, MAX_PARKED_PARENTS, idle_count)
    children = sizes.fanout_sessions * sizes.subagents
    bar = ctx.progress.bar("fanout", idle_count + children, "sessions+subagents")
    async with ctx.following(), open_pool(ctx.run.endpoint, 8) as pool:
        warm = await pool.session(9999)
        await run_turn(warm, "bench:fanout 1 #warm")
        await close_session(pool, warm)
        rss0 = await _quiet_rss(ctx)
        ids = await _idle_sessions(ctx, pool, idle_count, bar)
        rss1 = await _quiet_rss(ctx)
        tree_idle = await tree_stats(pool.client)
        parked, rss2 = await _parked(ctx, pool, ids[:parked_parents])
        fan = await _fanout(ctx, pool, bar)
        bar.close()
        await _in_batches(ids, lambda sid: pool.client.call("session.close", session=sid))
        await trio.sleep(QUIET)
        tree_end = await tree_stats(pool.client)
    done = fan["statuses"].get("completed", 0)
    return {
        "figures": {
            "completion_s": round(fan["seconds"], 3),
            "subagents_per_s": round(children / fan["seconds"], 1) if fan["seconds"] else 0.0,
            "peak_rss_mb": round(fan["peak_rss_mb"], 1),
            "idle_session_kb": round((rss1 - rss0) / idle_count, 1),
            "idle_subagent_kb": round((rss2 - rss1) / parked, 1) if parked else 0.0,
        },
        "invariants": {
            "every_subagent_completed": done == children,
            "every_parent_answered": fan["reasons"].get("completed", 0) == sizes.fanout_sessions,
            "no_session_left_running": tree_end["sessions_live"] == 0,
        },
        "details": {
            "children": children,
            "subagent_statuses": fan["statuses"],
            "parked_subagents": parked,
            "rss_kb": {"baseline": rss0, "idle_sessions": rss1, "parked": rss2},
            "vm_hwm_mb": round(peak_rss_mb(ctx.run.pid), 1),
            "actors_with_idle_sessions": tree_idle["actors"],
            "actors_at_end": tree_end["actors"],
            "events_dropped": pool.dropped,
        },
        "samples": {},
    }
