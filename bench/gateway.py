"""``python -m bench gateway``: the daemon's surfaces under load, against a real daemon process.

A ``hermes daemon`` subprocess (isolated XDG directories, the offline demo
model streaming a delta every ``event_delay`` seconds) is driven over real
WebSocket and HTTP connections from this process:

- ``ws_cancel_p99_ms``: with ``busy`` sessions all running turns (each one
  restarted as soon as it ends), the time from a ``cancel`` frame leaving a
  WebSocket client to that session's ``turn.completed`` (reason
  ``cancelled``) arriving back on the same connection. p99 of ``cancels``
  samples. Target <= 50. This process's own cyclic collector is paused while
  the cancels are sampled (``client_gc_paused``): it holds the load client
  too, and its full collections (up to ~270 ms with 100 sessions' event
  streams in flight) would be charged to the daemon; the daemon's collector
  runs as configured.
- ``http_cancel_p99_ms``: the same load, ``POST /sessions/{id}/cancel`` on a
  fresh connection until its answer (which comes once the session is idle
  and its history persisted).
- ``ws_clients_sustained``: the most concurrent WebSocket clients (of
  ``levels``) that all receive every event of one session's turn: each
  client subscribed, none dropped an event or missed a seq, each got
  ``turn.completed`` within 10 s. Target >= 1,000.
- ``event_fanout_per_s``: at that level, events delivered to all clients
  together per second (from the prompt to the last client's
  ``turn.completed``).
- ``flood_rss_growth_mb``, ``flood_rss_after_pct`` and
  ``owner_connect_ms_under_lockout``: the gateway under abuse, on a daemon
  of their own (see ``bench/gateway_abuse.py``).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import attrs
import trio

from hermes.gateway.client import Client, Endpoint, NoDaemon, connect, find_daemon
from hermes.paths import resolve_paths

from .gateway_abuse import measure_flood, measure_lockout
from .stats import format_table, targets_met

TARGETS: dict[str, tuple[str, float]] = {
    "ws_cancel_p99_ms": ("<=", 50.0),
    "ws_clients_sustained": (">=", 1000),
    "flood_rss_growth_mb": ("<=", 50.0),
    "flood_rss_after_pct": ("<=", 10.0),
    "owner_connect_ms_under_lockout": ("<=", 100.0),
}
MAX_UNAUTHENTICATED = 64
"""The daemon's default ``gateway.max_unauthenticated``: the slots the lockout holds."""
PROMPT = "please tell me a long story about " + " ".join(f"word{i}" for i in range(240))
"""The demo model echoes it back in ~40 deltas."""
DELIVERY_DEADLINE = 10.0


@attrs.frozen
class Sizes:
    busy: int = 100
    cancels: int = 200
    levels: tuple[int, ...] = (250, 500, 1000, 1500, 2000)
    event_delay: float = 0.05
    flood_seconds: float = 30.0
    settle_seconds: float = 60.0
    lockout_samples: int = 21

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            busy=4,
            cancels=6,
            levels=(4, 8),
            event_delay=0.02,
            flood_seconds=2.0,
            settle_seconds=1.0,
            lockout_samples=5,
        )


# -- the daemon --------------------------------------------------------------------------


@contextmanager
def daemon_process(event_delay: float) -> Iterator[Endpoint]:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-gw-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "XDG_"))}
        env.pop("ANTHROPIC_API_KEY", None)
        env.update(
            XDG_CONFIG_HOME=str(root / "config"),
            XDG_DATA_HOME=str(root / "data"),
            XDG_RUNTIME_DIR=str(root / "run"),
            HOME=str(root / "home"),
        )
        (root / "home").mkdir()
        config = root / "config" / "hermes" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            f'[model]\nfake_event_delay = {event_delay}\n[logging]\nlevel = "warning"\n'
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "hermes", "daemon"],
            env=env,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            paths = resolve_paths(env)
            deadline = time.monotonic() + 30
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"the daemon exited: {proc.stderr.read()!r}")  # type: ignore[union-attr]
                with suppress(NoDaemon):
                    endpoint = find_daemon(paths)
                    if endpoint.pid == proc.pid:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError("the daemon did not start in 30 s")
                time.sleep(0.02)
            yield endpoint
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
            if proc.stderr is not None:
                proc.stderr.close()


# -- cancel latency ----------------------------------------------------------------------


@attrs.define
class _Load:
    """Keeps sessions busy: a new turn as soon as one ends (on its own connection)."""

    client: Client
    sessions: list[str]
    running: set[str] = attrs.field(factory=set)
    probing: set[str] = attrs.field(factory=set)

    async def dispatch(self, nursery: trio.Nursery) -> None:
        async for event in self.client.events:
            kind, session = event.get("type"), event.get("session")
            if kind == "turn.started":
                self.running.add(session)
            elif kind == "turn.completed":
                self.running.discard(session)
                nursery.start_soon(self.submit, session)

    async def submit(self, session: str) -> None:
        with suppress(Exception):
            await self.client.call("prompt.submit", session=session, text=PROMPT, mode="queue")

    async def busy_one(self, index: int) -> str:
        """A session that is running a turn now (waits for one)."""
        for step in range(2000):
            session = self.sessions[(index + step) % len(self.sessions)]
            if session in self.running and session not in self.probing:
                return session
            await trio.sleep(0.005)
        raise RuntimeError("no busy session")


async def _completed(probe: Client, session: str) -> float:
    async for event in probe.events:
        if event.get("type") == "turn.completed" and event.get("session") == session:
            return time.perf_counter()
    raise RuntimeError("the probe connection closed")


async def _sessions(client: Client, n: int) -> list[str]:
    out = []
    for _ in range(n):
        session = (await client.call("session.create", busy_mode="queue"))["id"]
        await client.call("events.subscribe", session=session)
        out.append(session)
    return out


async def _http_cancel(endpoint: Endpoint, session: str) -> bytes:
    host, port = endpoint.info["host"], int(endpoint.info["port"])
    stream = await trio.open_tcp_stream(host, port)
    async with stream:
        body = b"{}"
        await stream.send_all(
            f"POST /sessions/{session}/cancel HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {endpoint.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        data = b""
        while chunk := await stream.receive_some(65536):
            data += chunk
    return data


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _summary(samples: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples]
    return {
        "n": len(ms),
        "p50": round(statistics.median(ms), 2) if ms else 0.0,
        "p99": round(_p(ms, 0.99), 2),
        "max": round(max(ms), 2) if ms else 0.0,
    }


async def measure_cancels(endpoint: Endpoint, sizes: Sizes) -> dict[str, Any]:
    """A load connection keeps ``busy`` sessions running; a probe connection, subscribed
    only to the session it cancels, times each cancel."""
    ws: list[float] = []
    http: list[float] = []
    gc.collect()
    gc.disable()  # see ``client_gc_paused`` in the module doc
    try:
        return await _sample_cancels(endpoint, sizes, ws, http)
    finally:
        gc.enable()


async def _sample_cancels(
    endpoint: Endpoint, sizes: Sizes, ws: list[float], http: list[float]
) -> dict[str, Any]:
    async with (
        connect(endpoint) as client,
        connect(endpoint) as probe,
        trio.open_nursery() as nursery,
    ):
        load = _Load(client, await _sessions(client, sizes.busy))
        nursery.start_soon(load.dispatch, nursery)
        for session in load.sessions:
            await load.submit(session)
        for i in range(2 * sizes.cancels):
            over_ws = i < sizes.cancels
            session = await load.busy_one(i * 7)
            load.probing.add(session)
            await probe.call("events.subscribe", session=session)
            start = time.perf_counter()
            if over_ws:
                answer = await probe.call("cancel", session=session)
                cancelled = bool(answer["cancelled"])
            else:
                data = await _http_cancel(endpoint, session)
                answered = time.perf_counter()
                cancelled = b'"cancelled":true' in data.replace(b" ", b"")
            with trio.move_on_after(10):
                arrived = await _completed(probe, session)
                if cancelled:
                    (ws if over_ws else http).append((arrived if over_ws else answered) - start)
            await probe.call("events.unsubscribe", session=session)
            load.probing.discard(session)
        nursery.cancel_scope.cancel()
    return {"ws": _summary(ws), "http": _summary(http)}


# -- many clients on one session -----------------------------------------------------------


async def _fanout_level(endpoint: Endpoint, clients: int) -> dict[str, Any]:
    """``clients`` connections subscribed to one session while it runs one turn."""
    async with connect(endpoint) as driver:
        session = (await driver.call("session.create"))["id"]
        ready = trio.Semaphore(0)
        go = trio.Event()
        results: list[tuple[int, bool, float]] = []
        connected = 0

        async def one() -> None:
            nonlocal connected
            count, ok, last = 0, True, 0
            try:
                async with connect(endpoint) as client:
                    await client.call("events.subscribe", session=session, timeout=60)
                    connected += 1
                    ready.release()
                    await go.wait()
                    with trio.move_on_after(60 + DELIVERY_DEADLINE):
                        async for event in client.events:
                            if event.get("type") == "events.dropped":
                                ok = False
                            seq = event.get("seq")
                            if isinstance(seq, int):
                                ok = ok and seq == last + 1 if last else ok
                                last = seq
                            count += 1
                            if event.get("type") == "turn.completed":
                                results.append((count, ok, time.perf_counter()))
                                return
            except Exception:
                ready.release()
            results.append((count, False, time.perf_counter()))

        async with trio.open_nursery() as nursery:
            for _ in range(clients):
                nursery.start_soon(one)
            for _ in range(clients):
                await ready.acquire()
            go.set()
            start = time.perf_counter()
            await driver.call("prompt.submit", session=session, text=PROMPT)
        finished = [r for r in results if r[1]]
        last = max((r[2] for r in results), default=start)
        events = sum(r[0] for r in results)
        return {
            "clients": clients,
            "connected": connected,
            "complete": len(finished),
            "events": events,
            "seconds": round(last - start, 3),
            "events_per_s": round(events / (last - start), 1) if last > start else 0.0,
            "sustained": len(finished) == clients,
        }


async def measure_all(sizes: Sizes) -> dict[str, Any]:
    with daemon_process(sizes.event_delay) as endpoint:
        cancels = await measure_cancels(endpoint, sizes)
        levels = []
        for clients in sizes.levels:
            level = await _fanout_level(endpoint, clients)
            levels.append(level)
            if not level["sustained"]:
                break
    with daemon_process(sizes.event_delay) as endpoint:  # a fresh one: RSS from its start
        flood = await measure_flood(endpoint, sizes.flood_seconds, sizes.settle_seconds)
        lockout = await measure_lockout(endpoint, MAX_UNAUTHENTICATED, sizes.lockout_samples)
    good = [lv for lv in levels if lv["sustained"]]
    best = good[-1] if good else None
    return {
        "ws_cancel_p99_ms": cancels["ws"]["p99"],
        "http_cancel_p99_ms": cancels["http"]["p99"],
        "ws_clients_sustained": best["clients"] if best else 0,
        "event_fanout_per_s": best["events_per_s"] if best else 0.0,
        "flood_rss_growth_mb": flood["flood_rss_growth_mb"],
        "flood_rss_after_mb": flood["flood_rss_after_mb"],
        "flood_rss_after_pct": flood["flood_rss_after_pct"],
        "owner_connect_ms_under_lockout": lockout["owner_connect_ms_under_lockout"],
        "owner_connect_ms_baseline": lockout["owner_connect_ms_baseline"],
        "details": {
            "ws_cancel_ms": cancels["ws"],
            "http_cancel_ms": cancels["http"],
            "client_gc_paused": True,
            "levels": levels,
            "flood": flood["flood"],
            "lockout": lockout["lockout"],
            "sizes": attrs.asdict(sizes),
        },
    }


def _raise_fd_limit(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def measure(sizes: Sizes) -> dict[str, Any]:
    _raise_fd_limit(2 * max(sizes.levels) + 1024)  # the daemon inherits it too
    results = trio.run(measure_all, sizes)
    results["targets_met"] = targets_met(results, TARGETS)
    return results


def render(results: dict[str, Any]) -> str:
    d = results["details"]
    met = results["targets_met"]
    ws, http = d["ws_cancel_ms"], d["http_cancel_ms"]
    busy = d["sizes"]["busy"]
    top = next((lv for lv in reversed(d["levels"]) if lv["sustained"]), None)
    rows = [
        (
            "ws_cancel_p99_ms",
            f"{results['ws_cancel_p99_ms']:.1f}",
            f"{busy} busy sessions; p50 {ws['p50']:.1f}, max {ws['max']:.1f} (n={ws['n']})",
            "<= 50",
            "yes" if met["ws_cancel_p99_ms"] else "NO",
        ),
        (
            "http_cancel_p99_ms",
            f"{results['http_cancel_p99_ms']:.1f}",
            f"new connection per cancel; p50 {http['p50']:.1f}, max {http['max']:.1f}",
            "-",
            "-",
        ),
        (
            "ws_clients_sustained",
            str(results["ws_clients_sustained"]),
            "every client got every event of a turn"
            + (f" ({top['events']} events in {top['seconds']} s)" if top else ""),
            ">= 1000",
            "yes" if met["ws_clients_sustained"] else "NO",
        ),
        (
            "event_fanout_per_s",
            f"{results['event_fanout_per_s']:,.0f}",
            "events delivered to all clients together per second",
            "-",
            "-",
        ),
        (
            "flood_rss_growth_mb",
            f"{results['flood_rss_growth_mb']:.1f}",
            f"peak RSS above the start while one client floods, reading 64 KB/s "
            f"({d['flood']['seconds']:g} s; start {d['flood']['start_rss_mb']} MB)",
            "<= 50",
            "yes" if met["flood_rss_growth_mb"] else "NO",
        ),
        (
            "flood_rss_after_pct",
            f"{results['flood_rss_after_pct']:.1f}",
            f"RSS above the start {d['flood']['settle_seconds']:g} s after the flood "
            f"({results['flood_rss_after_mb']:.1f} MB)",
            "<= 10",
            "yes" if met["flood_rss_after_pct"] else "NO",
        ),
        (
            "owner_connect_ms_under_lockout",
            f"{results['owner_connect_ms_under_lockout']:.1f}",
            f"connect + first answer while {d['lockout']['idle_connections']} idle connections "
            f"hold the handshake slots (baseline {results['owner_connect_ms_baseline']:.1f})",
            "<= 100",
            "yes" if met["owner_connect_ms_under_lockout"] else "NO",
        ),
    ]
    return format_table(("figure", "value", "measured", "target", "met"), rows)


def main(json_output: bool, quick: bool, reps: int) -> int:
    del reps  # percentiles over many samples rather than repetitions
    results = measure(Sizes.quick() if quick else Sizes())
    print(json.dumps(results, indent=2) if json_output else render(results))
    return 0
