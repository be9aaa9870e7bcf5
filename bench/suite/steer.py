"""Scenario ``steer``: from a steer to its delivery, while the sessions load runs.

Two probe sessions, each in a working directory with a FIFO, take turns
``steers`` times in all: the model runs ``terminal cat steer.fifo``, which
blocks; once ``cat`` is in ``/proc`` the benchmark sends ``steer`` over
WebSocket and, as soon as the steer is accepted, writes to the FIFO, so the
tool batch ends and the steer is delivered at that seam.
``steer_to_delivered_ms`` is the time from the ``steer`` frame leaving this
process to the session's ``steer.delivered`` event (published once the steer's
row is in the store); ``steer_to_accepted_ms`` until the ``steer`` answer.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path
from typing import Any

import trio

from . import procfs
from .context import Context
from .driver import Pool, SessionRef, matches, open_pool
from .fake import FIFO_NAME
from .figures import latency_ms
from .workload import LoadMeter, Workload, close_session

PROBES = 2
WAIT = 30.0


async def _release(fifo: Path) -> None:
    """Write a line to ``fifo`` once its reader has it open."""
    for _ in range(int(WAIT * 1000)):
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: nobody reads it yet
                raise
            await trio.sleep(0.001)
            continue
        try:
            os.write(fd, b"go\n")
        finally:
            os.close(fd)
        return
    raise TimeoutError(f"nobody opened {fifo} for reading")


async def _probe(
    ctx: Context, ref: SessionRef, cwd: Path, index: int, count: int, out: dict[str, Any]
) -> None:
    for n in range(count):
        start_index = len(ref.feed.events)
        accepted = await ref.call("prompt.submit", text=f"bench:fifo #q{index} step {n}")
        turn = accepted["turn"]
        note = f"steer note {index}-{n}"
        with trio.fail_after(WAIT):
            await ref.feed.wait(matches("tool.started"), start_index)
            await procfs.wait_for_pids(ctx.run.mark, cwd)
            start = time.perf_counter()
            answer = await ref.call("steer", text=note)
            accepted_at = time.perf_counter()
            await _release(cwd / FIFO_NAME)
            await ref.feed.wait(matches("steer.delivered", text=note), start_index)
            delivered = time.perf_counter()
            _, done = await ref.feed.wait(matches("turn.completed", turn=turn), start_index)
        out["accepted"].append(accepted_at - start)
        out["delivered"].append(delivered - start)
        out["how"][answer.get("how", "?")] = out["how"].get(answer.get("how", "?"), 0) + 1
        if done["payload"].get("reason") != "completed":
            out["problems"].append(f"{ref.id}: turn {turn} ended {done['payload'].get('reason')}")
        out["bar"].advance()


async def _probes(ctx: Context, pool: Pool, out: dict[str, Any]) -> None:
    refs = []
    async with trio.open_nursery() as nursery:
        for i in range(PROBES):
            cwd = ctx.run.cwd_for(f"probe-{i}")
            os.mkfifo(cwd / FIFO_NAME)
            ref = await pool.session(i, cwd=str(cwd))
            refs.append(ref)
            count = ctx.sizes.steers // PROBES + (1 if i < ctx.sizes.steers % PROBES else 0)
            nursery.start_soon(_probe, ctx, ref, cwd, i, count, out)
    for ref in refs:
        await close_session(pool, ref)


async def measure(ctx: Context) -> dict[str, Any]:
    sizes = ctx.sizes
    bar = ctx.progress.bar("steer", sizes.steers, "steers")
    out: dict[str, Any] = {"accepted": [], "delivered": [], "how": {}, "problems": [], "bar": bar}
    async with open_pool(ctx.run.endpoint, min(sizes.sessions, 8) + 1) as pool:
        load = Workload(pool, sizes.sessions, None, first_offset=PROBES, think=sizes.load_think)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(load.run)
            meter = LoadMeter(ctx.run.pid, load.tally)
            try:
                await _probes(ctx, pool, out)
            except trio.TooSlowError:
                out["problems"].append(f"a steer was not delivered within {WAIT:g}s")
            level = meter.result()
            load.stop.set()
        bar.close()
        await load.close_all()
    return {
        "figures": {
            "steer_to_delivered_ms": latency_ms(out["delivered"]),
            "steer_to_accepted_ms": latency_ms(out["accepted"]),
            "load": {"sessions": sizes.sessions, "think_s": sizes.load_think, **level},
        },
        "invariants": {
            "every_steer_delivered": len(out["delivered"]) == sizes.steers and not out["problems"],
            "load_prompts_answered_or_failed": load.tally.lost == 0,
        },
        "details": {
            "how": out["how"],
            "problems": out["problems"][:20],
            "load_turns": load.tally.as_dict(),
        },
        "samples": {"steer_to_delivered_ms": [round(x * 1000, 2) for x in out["delivered"]]},
    }
