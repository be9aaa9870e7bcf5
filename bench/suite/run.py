"""Run scenarios, each against a daemon and fake provider started for it; gather one result.

Every scenario's result has ``figures`` (the measurements), ``invariants``
(name -> bool: what must hold whatever the timings), ``details`` and
``samples`` (raw data behind the plots). After the scenario, the daemon is
stopped gracefully and three invariants are added to every scenario:
``daemon_stopped_cleanly`` (exit 0 within 20 s), ``no_process_left`` (no
process the daemon started survives it) and ``transcripts_valid`` (every
transcript in its database, checked read-only; see ``transcripts.py``).
"""

from __future__ import annotations

import importlib
import os
import platform
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

import attrs
import trio

from .context import Context
from .harness import open_run
from .progress import Progress
from .sizes import Sizes
from .transcripts import check_store

_MODULES = {"cancel": "cancelstorm"}


Measure = Callable[[Context], Coroutine[Any, Any, dict[str, Any]]]


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: stop like Ctrl+C (everything started is stopped)."""


async def _guarded(measure: Measure, ctx: Context) -> dict[str, Any]:
    """``measure(ctx)``, cancelled by SIGTERM or SIGHUP (then ``Terminated`` is raised)."""
    got: list[int] = []
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                async for signum in signals:
                    got.append(signum)
                    nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            result = await measure(ctx)
            nursery.cancel_scope.cancel()
    if got:
        raise Terminated(signal.Signals(got[0]).name)
    return result


def run_scenario(name: str, sizes: Sizes, progress: Progress) -> dict[str, Any]:
    """One scenario, start to finish (processes stopped and reaped even on Ctrl+C).

    A scenario module has ``measure(ctx)``; optionally ``CONFIG`` (daemon
    settings), ``AUX_DELAY`` (the fake's delay for reviews and summaries) and
    ``record_max(sizes)`` (request bodies the fake records for a baseline).
    """
    started = time.monotonic()
    module = importlib.import_module(f"bench.suite.{_MODULES.get(name, name)}")
    measure: Measure = module.measure
    record = module.record_max(sizes) if hasattr(module, "record_max") else 0
    config = getattr(module, "CONFIG", None)
    with open_run(record, config, getattr(module, "AUX_DELAY", 0.0)) as run:
        ctx = Context.of(run, sizes, progress)
        result = trio.run(_guarded, measure, ctx)
        shutdown = run.stop_daemon()
        store = check_store(run.db_path)
    invariants = result.setdefault("invariants", {})
    invariants["daemon_stopped_cleanly"] = shutdown["exit_code"] == 0 and not shutdown["forced"]
    invariants["no_process_left"] = shutdown["leaked_processes"] == 0
    invariants["transcripts_valid"] = store["invalid"] == 0 and store["messages"] > 0
    details = result.setdefault("details", {})
    details["shutdown"] = shutdown
    details["transcripts"] = store
    result["ok"] = all(invariants.values())
    result["seconds"] = round(time.monotonic() - started, 2)
    return result


def run_suite(names: list[str], sizes: Sizes, progress: Progress, smoke: bool) -> dict[str, Any]:
    """The named scenarios in order; ``ok`` when every invariant of every one held."""
    started = time.time()
    scenarios: dict[str, Any] = {}
    for name in names:
        progress.say(f"== {name}")
        scenarios[name] = run_scenario(name, sizes, progress)
    return {
        "suite": {
            "scenarios": names,
            "smoke": smoke,
            "sizes": attrs.asdict(sizes),
            "machine": {
                "cpus": os.cpu_count(),
                "python": sys.version.split()[0],
                "platform": platform.platform(),
            },
            "started_at": round(started, 3),
            "seconds": round(time.time() - started, 2),
        },
        "scenarios": scenarios,
        "ok": all(s["ok"] for s in scenarios.values()),
    }
