"""Scenario ``cancel``: a storm of hard cancels from every surface while the load runs.

The sessions workload (N sessions, turns back to back) runs until the storm
is over. Meanwhile ``victims`` sessions, each in a working directory of its
own, are driven into a state worth cancelling and then hard-cancelled, one
after another, ``cancels`` times in all. Each cancel picks at random what
is cancelled; the surfaces take turns:

- what is cancelled: ``stream`` (a session whose reply is streaming: the fake
  opened an endless stream and a ``text.delta`` arrived), ``sleep`` (a
  session running ``terminal sleep 300``, visible in ``/proc``) or
  ``subagent`` (one subagent of a session, which started a background
  ``sleep 300`` and is streaming endlessly);
- the surface: ``ws`` (``cancel`` / ``subagent.stop`` frames), ``http``
  (``POST /sessions/{id}/cancel`` / ``.../subagents/{sa}/stop``, a new
  connection each) or ``cli`` (a ``hermes cancel ID`` / ``hermes cancel
  /hermes/.../sa-...`` process, so its Python start-up is included).

Before the load starts, the victims are cancelled from ``ws`` and ``http`` on
the idle daemon, for ``control.py``'s baselines (see there).

Three latencies, from the moment the command left this process (for the
CLI: when the process was started), p50/p99/max, overall and per surface:

- ``to_event``: the session's ``turn.completed`` (reason ``cancelled``) or
  the parent's ``subagent.finished`` for that subagent, on a WebSocket
  subscription;
- ``to_stream_closed``: the fake provider saw the client close the model
  stream (its own ``time.monotonic()`` stamp: the clock is system-wide);
- ``to_procs_gone``: ``/proc`` shows every process of the victim gone
  (polled every millisecond).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import trio

from . import control, procfs
from .context import Context
from .driver import Event, Pool, SessionRef, Tally, matches, open_pool
from .figures import latency_ms
from .floor import Floor, open_floor
from .workload import LoadMeter, Workload

SURFACES = ("ws", "http", "cli")
KINDS = ("stream", "sleep", "subagent")
METRICS = ("to_event", "to_stream_closed", "to_procs_gone")
WAIT = 30.0
_PROMPTS = {"stream": "bench:endless", "sleep": "bench:sleep", "subagent": "bench:spawn 1"}


@attrs.define
class Victim:
    ref: SessionRef
    cwd: Path
    tag: str
    path: str = ""
    """The session actor's path (from its events)."""
    cycles: int = 0
    stage: str = ""
    """Where ``make_hot`` is (what a timeout names)."""


@attrs.frozen
class Hot:
    """A victim ready to be cancelled."""

    kind: str
    turn: int
    start_index: int
    stream_tag: str | None
    closed_before: int
    pids: tuple[int, ...]
    subagent: str | None


@attrs.define
class Samples:
    by_surface: dict[str, dict[str, list[float]]] = attrs.field(
        factory=lambda: {s: {m: [] for m in METRICS} for s in SURFACES}
    )
    kinds: dict[str, int] = attrs.field(factory=lambda: dict.fromkeys(KINDS, 0))
    problems: list[str] = attrs.field(factory=list)
    answers: dict[str, list[float]] = attrs.field(factory=lambda: {s: [] for s in SURFACES})
    """Each cancel's round trip: the command leaving to its answer (the CLI: its exit)."""

    def add(self, surface: str, metric: str, seconds: float) -> None:
        self.by_surface[surface][metric].append(seconds)

    def summary(self) -> dict[str, Any]:
        overall = {
            m: latency_ms([x for s in SURFACES for x in self.by_surface[s][m]]) for m in METRICS
        }
        per_surface = {s: {m: latency_ms(self.by_surface[s][m]) for m in METRICS} for s in SURFACES}
        return {"overall": overall, "by_surface": per_surface}


async def make_hot(ctx: Context, victim: Victim, kind: str) -> Hot:
    """Prompt ``victim`` into ``kind``'s state and wait until it is there."""
    ref = victim.ref
    victim.cycles += 1
    start_index = len(ref.feed.events)
    stream_tag = victim.tag if kind == "stream" else f"{victim.tag}-0"
    opened = len(ctx.provider.opened[stream_tag])
    closed = len(ctx.provider.closed[stream_tag])
    text = f"{_PROMPTS[kind]} #{victim.tag} cycle {victim.cycles}"
    victim.stage = "submit"
    accepted = await ref.call("prompt.submit", text=text)
    pids: tuple[int, ...] = ()
    subagent = None
    with trio.fail_after(WAIT):
        if accepted.get("how") != "started":
            victim.stage = f"queued ({accepted})"
            _, began = await ref.feed.wait(matches("turn.started", prompt=text), start_index)
            accepted = began["payload"]
        turn = int(accepted["turn"])
        if kind == "stream":
            victim.stage = "stream opened"
            await ctx.provider.wait_opened(stream_tag, opened + 1)
            victim.stage = "first text.delta"
            await ref.feed.wait(matches("text.delta"), start_index)
        elif kind == "sleep":
            victim.stage = "tool.started"
            await ref.feed.wait(matches("tool.started"), start_index)
            victim.stage = "sleep in /proc"
            pids = await procfs.wait_for_pids(ctx.run.mark, victim.cwd)
        else:
            victim.stage = "subagent.started"
            _, started = await ref.feed.wait(matches("subagent.started"), start_index)
            subagent = started["payload"]["subagent_id"]
            victim.stage = "subagent stream opened"
            await ctx.provider.wait_opened(stream_tag, opened + 1)
            victim.stage = "subagent sleep in /proc"
            pids = await procfs.wait_for_pids(ctx.run.mark, victim.cwd)
    if not victim.path:
        victim.path = next((e["path"] for e in ref.feed.events if e.get("path")), "")
    return Hot(
        kind,
        turn,
        start_index,
        stream_tag if kind != "sleep" else None,
        closed,
        pids,
        subagent,
    )


async def _command(ctx: Context, pool: Pool, surface: str, victim: Victim, hot: Hot) -> None:
    ref, run = victim.ref, ctx.run
    if surface == "ws":
        if hot.subagent:
            await ref.call("subagent.stop", subagent=hot.subagent, timeout=WAIT)
        else:
            await ref.call("cancel", timeout=WAIT)
    elif surface == "http":
        path = f"/sessions/{ref.id}/" + (
            f"subagents/{hot.subagent}/stop" if hot.subagent else "cancel"
        )
        status, answer = await pool.post(path, {})
        if status != 200:
            raise RuntimeError(f"POST {path}: {status} {answer}")
    else:
        target = subagent_path(victim.path, hot.subagent) if hot.subagent else ref.id
        done = await trio.run_process(
            run.cli("cancel", target),
            env=run.env,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"hermes cancel {target}: {done.stderr.decode().strip()}")


SUBAGENTS = "subagents/sup"
"""Where a session's subagents run, below the session: its ``subagents`` supervisor's
``DynamicSupervisor`` (``hermes.subagents.supervisor.CHILDREN``; not imported, so the
bench client does not load the session code)."""


def subagent_path(session_path: str, subagent: str) -> str:
    """A subagent's actor path, what ``hermes cancel /path`` takes."""
    return f"{session_path}/{SUBAGENTS}/{subagent}"


def _event_match(hot: Hot) -> Callable[[Event], bool]:
    if hot.subagent:
        return matches("subagent.finished", subagent_id=hot.subagent)
    return matches("turn.completed", turn=hot.turn)


async def cancel_once(
    ctx: Context,
    pool: Pool,
    victim: Victim,
    hot: Hot,
    surface: str,
    out: Samples,
    floor: Floor | None = None,
) -> None:
    """Cancel ``hot`` from ``surface``; record the three latencies. With ``floor``, the
    same request shape goes to the floor server right after (``floor.py``)."""
    start = time.monotonic()
    seen: dict[str, float] = {}

    async def event() -> None:
        _, found = await victim.ref.feed.wait(_event_match(hot), hot.start_index)
        seen["to_event"] = time.monotonic()
        payload = found["payload"]
        if not hot.subagent and payload.get("reason") != "cancelled":
            out.problems.append(
                f"{victim.ref.id}: {hot.kind} turn cancelled from {surface} ended "
                f"{payload.get('reason')}: {payload.get('detail')!r}"
            )

    async def stream() -> None:
        assert hot.stream_tag is not None
        seen["to_stream_closed"] = await ctx.provider.wait_closed(
            hot.stream_tag, hot.closed_before + 1
        )

    async def procs() -> None:
        if await procfs.wait_gone(hot.pids, WAIT):
            seen["to_procs_gone"] = time.monotonic()

    with trio.move_on_after(WAIT) as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(event)
            if hot.stream_tag:
                nursery.start_soon(stream)
            if hot.pids:
                nursery.start_soon(procs)
            try:
                await _command(ctx, pool, surface, victim, hot)
                out.answers[surface].append(time.monotonic() - start)
            except Exception as exc:
                out.problems.append(f"{surface} cancel of {hot.kind}: {exc}")
                nursery.cancel_scope.cancel()
    if scope.cancelled_caught:
        missing = [m for m in METRICS if m not in seen]
        out.problems.append(f"{surface} cancel of {hot.kind}: no {', '.join(missing)} in {WAIT}s")
    for metric, at in seen.items():
        out.add(surface, metric, max(0.0, at - start))
    if floor is not None and surface == "ws":
        await floor.ws_cancel(victim.ref.id)
    elif floor is not None and surface == "http":
        await floor.http_cancel(f"/sessions/{victim.ref.id}/cancel")
    out.kinds[hot.kind] += 1
    if hot.subagent:  # the parent's turn goes on without its child: let it end
        with trio.move_on_after(WAIT):
            await victim.ref.feed.wait(matches("turn.completed", turn=hot.turn), hot.start_index)


async def _settle(victim: Victim) -> None:
    """After a failed cycle: cancel whatever runs and wait until the session is idle."""
    with trio.move_on_after(WAIT):
        await victim.ref.call("cancel", timeout=WAIT)
        for _ in range(int(WAIT / 0.05)):
            if not (await victim.ref.call("session.get"))["busy"]:
                return
            await trio.sleep(0.05)


async def _victims(ctx: Context, pool: Pool, count: int) -> list[Victim]:
    victims = []
    for i in range(count):
        cwd = ctx.run.cwd_for(f"victim-{i}")
        ref = await pool.session(i, cwd=str(cwd))
        victims.append(Victim(ref, cwd, f"v{i}"))
    return victims


def _pairs(rng: random.Random, surfaces: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    pairs = [(surface, kind) for surface in surfaces for kind in KINDS]
    while True:
        rng.shuffle(pairs)
        yield from pairs


async def storm(
    ctx: Context,
    pool: Pool,
    out: Samples,
    on_cancel: Callable[[], None],
    victims: list[Victim],
    cancels: int,
    surfaces: tuple[str, ...] = SURFACES,
    floor: Floor | None = None,
) -> None:
    """``cancels`` cancels over the victims, each victim cancelled in turn. Every
    (surface, kind) pair comes once per round, in a random order each round, so a
    storm of ``len(surfaces) * len(KINDS)`` cancels tries each way at least once."""
    turns = _pairs(ctx.rng, surfaces)

    async def one_victim(victim: Victim, count: int) -> None:
        for _ in range(count):
            surface, kind = next(turns)
            start_index = len(victim.ref.feed.events)
            try:
                hot = await make_hot(ctx, victim, kind)
            except trio.TooSlowError:
                seen = [e["type"] for e in victim.ref.feed.events[start_index:]][-8:]
                out.problems.append(
                    f"{victim.ref.id}: no {kind} within {WAIT:g}s, waiting for "
                    f"{victim.stage}; last events {seen}"
                )
                await _settle(victim)
                continue
            await cancel_once(ctx, pool, victim, hot, surface, out, floor)
            on_cancel()

    share = [cancels // len(victims)] * len(victims)
    for i in range(cancels % len(victims)):
        share[i] += 1
    async with trio.open_nursery() as nursery:
        for victim, count in zip(victims, share, strict=True):
            nursery.start_soon(one_victim, victim, count)


async def _close(ref: SessionRef) -> None:
    await ref.call("session.close", timeout=60.0)


async def measure(ctx: Context) -> dict[str, Any]:
    sizes = ctx.sizes
    bar = ctx.progress.bar("cancel", sizes.cancels, "cancels")
    out, idle = Samples(), Samples()
    pings: dict[str, list[float]] = {"idle": [], "load": []}
    async with (
        ctx.following(),
        open_pool(ctx.run.endpoint, min(sizes.sessions, 8) + 1) as pool,
        open_floor(pool.http) as floor,
    ):
        victims = await _victims(ctx, pool, sizes.victims)
        # The same requests on the idle daemon first: each one's own baseline.
        idle_cancels = max(4, sizes.cancels // 3)
        await storm(ctx, pool, idle, lambda: None, victims, idle_cancels, ("ws", "http"), floor)
        await control.ping_status(pool, pings["idle"], control.IDLE_PINGS, floor)
        floor.phase = "load"
        gc_before = (await pool.client.call("daemon.stats"))["gc"]
        load = Workload(
            pool, sizes.sessions, None, first_offset=sizes.victims, think=sizes.load_think
        )
        async with trio.open_nursery() as nursery:
            nursery.start_soon(load.run)
            meter = LoadMeter(ctx.run.pid, load.tally)
            async with trio.open_nursery() as pinging:
                pinging.start_soon(control.ping_status, pool, pings["load"], None, floor)
                await storm(ctx, pool, out, bar.advance, victims, sizes.cancels, SURFACES, floor)
                pinging.cancel_scope.cancel()
            gc_after = (await pool.client.call("daemon.stats"))["gc"]
            level = meter.result()
            load.stop.set()
        bar.close()
        async with trio.open_nursery() as nursery:
            for victim in victims:
                nursery.start_soon(_close, victim.ref)
        await load.close_all()
        await trio.sleep(0.5)
        left = ctx.run.marked()
    control_figures = control.figures(
        {
            "ws_cancel": idle.answers["ws"],
            "http_cancel": idle.answers["http"],
            "status": pings["idle"],
        },
        {
            "ws_cancel": out.answers["ws"],
            "http_cancel": out.answers["http"],
            "status": pings["load"],
        },
        gc_after,
        floor.samples,
    )
    summary = out.summary()
    tally: Tally = load.tally
    made = sum(out.kinds.values())
    return {
        "figures": {
            "cancels": made,
            "to_event_ms": summary["overall"]["to_event"],
            "to_stream_closed_ms": summary["overall"]["to_stream_closed"],
            "to_procs_gone_ms": summary["overall"]["to_procs_gone"],
            "by_surface": summary["by_surface"],
            "load": {"sessions": sizes.sessions, "think_s": sizes.load_think, **level},
            **control_figures,
        },
        "targets": control.targets(control_figures),
        "invariants": {
            "every_cancel_observed": not out.problems
            and not idle.problems
            and made == sizes.cancels,
            "load_prompts_answered_or_failed": tally.lost == 0,
            "no_process_left_running": not left,
        },
        "details": {
            "kinds": out.kinds,
            "problems": out.problems[:20],
            "load_turns": tally.as_dict(),
            "processes_left": len(left),
            "idle_problems": idle.problems[:10],
            "gc": {"after": gc_after, "storm": control.gc_storm(gc_before, gc_after)},
        },
        "samples": {
            f"{m}_ms": {s: [round(x * 1000, 2) for x in out.by_surface[s][m]] for s in SURFACES}
            for m in METRICS
        },
    }
