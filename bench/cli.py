"""``python -m bench cli``: the CLI's control commands against a bare connection, and the
time ``hermes daemon start`` takes to return a serving daemon.

Every figure is measured in the same run, against a daemon started for it in a
temporary directory (its own XDG directories, the offline demo model):

- ``cli_status_ratio``, ``cli_sessions_ratio``, ``cli_cancel_ratio``: the wall
  time of ``hermes daemon status``, ``hermes sessions`` and ``hermes cancel
  SESSION`` (an idle session), each a fresh ``python -m hermes`` process from
  exec to exit, divided by the wall time of ``bench/cli_baseline.py`` sending
  the same request over the same connection (endpoint and token files read,
  the Bearer token, the ``hermes.json`` subprotocol) with nothing but
  ``trio-websocket``. Medians of interleaved runs (``3 x --reps`` each).
  Target <= 1.5.
- ``daemon_ready_s``: ``hermes daemon start`` from exec until it returns, the
  daemon serving (median of ``--reps`` starts, each followed by a stop).
- ``daemon_imports_s``: the seconds the started daemon itself spent importing
  before it printed its ready line, from its ``PYTHONPROFILEIMPORTTIME``
  output in ``daemon.out`` (the sum of the top-level imports), in starts
  interleaved with the plain ones.
- ``daemon_ready_over_imports_s``: in each of those starts, ``hermes daemon
  start``'s wall time minus that daemon's import time (median): the CLI's own
  start, the daemon's start-up work, and the wait for it. Paired within one
  start, so the machine's noise in import times (seconds on a busy box)
  cancels. Target <= 0.5.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .stats import figures_table, report, targets_met

TARGETS: dict[str, tuple[str, float]] = {
    "cli_status_ratio": ("<=", 1.5),
    "cli_sessions_ratio": ("<=", 1.5),
    "cli_cancel_ratio": ("<=", 1.5),
    "daemon_ready_over_imports_s": ("<=", 0.5),
}
BASELINE = Path(__file__).with_name("cli_baseline.py")
IMPORT_LINE = re.compile(r"import time:\s*\d+\s*\|\s*(\d+)\s*\| (\S+)")
"""A top-level line of ``PYTHONPROFILEIMPORTTIME`` output (nested ones are indented)."""
BOUND = 120.0
"""Seconds one process may take before the run gives up on it."""


def isolated_env(root: Path) -> dict[str, str]:
    """This environment with the daemon's directories under ``root`` and no API key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "XDG_"))}
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_RUNTIME_DIR=str(root / "run"),
        HOME=str(root / "home"),
    )
    return env


class Runner:
    """Runs and times processes in the isolated environment; collects what went wrong."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = isolated_env(root)
        self.runtime_dir = root / "run" / "hermes"
        self.failures: dict[str, int] = {}
        """What went wrong, and how many times."""

    def timed(
        self, argv: Sequence[str], what: str, env: dict[str, str] | None = None
    ) -> tuple[float, str | None]:
        """Wall seconds of ``argv`` from exec to exit, and its stdout (None if it failed)."""
        start = time.perf_counter()
        done = subprocess.run(
            list(argv),
            env=env or self.env,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=BOUND,
        )
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            problem = f"{what} exited {done.returncode}: {' | '.join(tail)}"
            self.failures[problem] = self.failures.get(problem, 0) + 1
        return elapsed, done.stdout if done.returncode == 0 else None

    @property
    def problems(self) -> list[str]:
        return [f"{p} ({n} times)" if n > 1 else p for p, n in self.failures.items()]

    def hermes(self, *args: str, profile: bool = False) -> tuple[float, str | None]:
        """``hermes ARGS``; with ``profile``, it (and a daemon it starts) report imports."""
        env = {**self.env, "PYTHONPROFILEIMPORTTIME": "1"} if profile else self.env
        argv = [sys.executable, "-m", "hermes", *args]
        return self.timed(argv, "hermes " + " ".join(args), env)

    def baseline(self, method: str, params: dict[str, Any]) -> tuple[float, str | None]:
        argv = [sys.executable, str(BASELINE), str(self.runtime_dir), method, json.dumps(params)]
        return self.timed(argv, f"baseline {method}")


def import_seconds(output: str) -> float | None:
    """Seconds a daemon spent importing before its ready line, from its
    ``PYTHONPROFILEIMPORTTIME`` output (None: no ready line)."""
    micros = 0
    for line in output.splitlines():
        if "listening on" in line:
            return micros / 1e6
        found = IMPORT_LINE.match(line)
        if found is not None:
            micros += int(found.group(1))
    return None


def measure_ready(runner: Runner, reps: int) -> dict[str, list[float]]:
    """Plain starts (``daemon_ready_s``) interleaved with starts whose daemon reports
    its own import time; each start is followed by a stop."""
    out = runner.root / "data" / "hermes" / "logs" / "daemon.out"
    runner.hermes("daemon", "start")  # the first start creates the database: not counted
    runner.hermes("daemon", "stop")
    ready, profiled, imports = [], [], []
    for _ in range(reps):  # a start that failed is left out (its failure is reported)
        elapsed, started = runner.hermes("daemon", "start")
        if started is not None:
            ready.append(elapsed)
            runner.hermes("daemon", "stop")
        offset = out.stat().st_size if out.exists() else 0
        elapsed, started = runner.hermes("daemon", "start", profile=True)
        if started is None:
            continue
        with out.open("rb") as file:
            file.seek(offset)
            seconds = import_seconds(file.read().decode(errors="replace"))
        runner.hermes("daemon", "stop")
        if seconds is None:
            runner.failures[f"no ready line in {out}"] = 1
            continue
        profiled.append(elapsed)
        imports.append(seconds)
    return {"ready_s": ready, "profiled_ready_s": profiled, "imports_s": imports}


def measure_commands(runner: Runner, samples: int) -> dict[str, dict[str, list[float]]]:
    """Each control command and its baseline, interleaved (alternating which goes first)."""
    _, created = runner.baseline("session.create", {})
    session = json.loads(created)["id"] if created else "missing"
    commands: dict[str, tuple[list[str], str, dict[str, Any]]] = {
        "status": (["daemon", "status"], "daemon.status", {}),
        "sessions": (["sessions"], "session.list", {"limit": 50}),
        "cancel": (["cancel", session], "cancel", {"session": session}),
    }
    times: dict[str, dict[str, list[float]]] = {
        name: {"cli_s": [], "baseline_s": []} for name in commands
    }
    for args, method, params in commands.values():  # warm the page cache
        runner.hermes(*args)
        runner.baseline(method, params)
    for i in range(samples):
        for name, (args, method, params) in commands.items():
            order = ["cli_s", "baseline_s"] if i % 2 == 0 else ["baseline_s", "cli_s"]
            for side in order:
                run = runner.hermes(*args) if side == "cli_s" else runner.baseline(method, params)
                if run[1] is not None:  # a failed run is reported, not timed
                    times[name][side].append(run[0])
    return times


def measure(quick: bool, reps: int) -> dict[str, Any]:
    samples, starts = (2, 1) if quick else (3 * reps, reps)
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        root = Path(tmp)
        (root / "home").mkdir()
        runner = Runner(root)
        try:
            ready = measure_ready(runner, starts)
            runner.hermes("daemon", "start")
            commands = measure_commands(runner, samples)
        finally:
            subprocess.run(
                [sys.executable, "-m", "hermes", "daemon", "stop"],
                env=runner.env,
                capture_output=True,
                timeout=BOUND,
            )
    results: dict[str, Any] = {}
    for name, sides in commands.items():
        cli, base = _median(sides["cli_s"]), _median(sides["baseline_s"])
        results[f"cli_{name}_ratio"] = cli / base
        results[f"cli_{name}_ms"] = cli * 1e3
        results[f"baseline_{name}_ms"] = base * 1e3
    over = [r - i for r, i in zip(ready["profiled_ready_s"], ready["imports_s"], strict=True)]
    results.update(
        daemon_ready_s=_median(ready["ready_s"]),
        daemon_imports_s=_median(ready["imports_s"]),
        daemon_ready_over_imports_s=_median(over),
    )
    results["targets_met"] = targets_met(results, TARGETS)
    results["problems"] = runner.problems
    results["details"] = {"samples": {**commands, "daemon": ready}, "sizes": [samples, starts]}
    return results


def _median(values: list[float]) -> float:
    """The median, NaN for no sample (every run of it failed: see ``problems``)."""
    return statistics.median(values) if values else math.nan


def render(results: dict[str, Any]) -> str:
    met = results["targets_met"]
    rows: list[tuple[object, ...]] = []
    commands = {"status": "daemon status", "sessions": "sessions", "cancel": "cancel SESSION"}
    for name, command in commands.items():
        key = f"cli_{name}_ratio"
        rows.append(
            (
                key,
                f"{results[key]:.2f}",
                f"hermes {command} {results[f'cli_{name}_ms']:.0f} ms vs bare trio-websocket "
                f"{results[f'baseline_{name}_ms']:.0f} ms",
                "<= 1.5",
                "yes" if met[key] else "NO",
            )
        )
    rows.append(
        (
            "daemon_ready_s",
            f"{results['daemon_ready_s']:.2f}",
            f"hermes daemon start; the daemon's imports alone {results['daemon_imports_s']:.2f} s",
            "-",
            "-",
        )
    )
    rows.append(
        (
            "daemon_ready_over_imports_s",
            f"{results['daemon_ready_over_imports_s']:.2f}",
            "each start minus its daemon's own import time",
            "<= 0.5",
            "yes" if met["daemon_ready_over_imports_s"] else "NO",
        )
    )
    return figures_table(rows, results["problems"])


def main(json_output: bool, quick: bool, reps: int) -> int:
    return report(measure(quick, reps), render, json_output)
