"""``python -m bench.guards [--json] [--quick] [--reps N]``: the path guard and checkpoints.

Figures (all in one run, on real files in a temporary directory):

- ``path_check_us``: one ``PathPolicy`` ruling (``check_write`` and
  ``check_read`` alternately) over a mix of 200 paths: project files, a
  symlink into ``~/.ssh``, ``..`` escapes, ``.env``, an instruction file.
  Baseline: ``realpath_us``, ``os.path.realpath`` alone on the same paths
  (``path_check_ratio``), since every ruling resolves its path first.
- ``checkpoint_first_ms``: the first snapshot of a 1,000-file working tree
  (shadow repository created, every file added); ``checkpoint_incremental_ms``:
  a snapshot after ten files changed; ``checkpoint_unchanged_ms``: one when
  nothing changed (what a destructive command costs in a clean tree).
- ``turn_off_ms`` / ``turn_on_ms``: a turn's tool batch (ten ``write_file``
  calls through the registry and ``run_batch``, each turn with its own
  interrupt event) in the 1,000-file tree without and with a
  ``CheckpointService`` (one incremental snapshot per turn);
  ``turn_overhead_ms`` is the difference of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs
import trio

from hermes.tools import ToolCall, ToolContext, default_registry, run_batch
from hermes.tools.checkpoint import CheckpointService, ShadowRepo
from hermes.tools.guard import PathPolicy


def _tree(root: Path, files: int) -> None:
    for i in range(files):
        sub = root / f"pkg{i % 20}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"mod{i}.py").write_text(f"VALUE = {i}\n" * 20)


def _paths(base: Path, home: Path) -> list[str]:
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    link = base / "keys"
    if not link.exists():
        link.symlink_to(home / ".ssh")
    names = [
        "pkg1/mod1.py",
        "pkg2/new.py",
        "keys/id_rsa",
        "pkg3/../../home/.aws/credentials",
        ".env",
        "AGENTS.md",
        "docs/guide.md",
        "pkg4/mod4.py",
    ]
    return [str(base / names[i % len(names)]) for i in range(200)]


def _time_us(fn: Any, items: list[str], reps: int) -> float:
    runs: list[float] = []
    for _ in range(reps):
        start = time.perf_counter()
        for item in items:
            fn(item)
        runs.append((time.perf_counter() - start) / len(items) * 1e6)
    return statistics.median(runs)


async def _turns(ctx: ToolContext, work: Path, count: int, tag: str) -> list[float]:
    registry = default_registry(processes=False)
    times: list[float] = []
    for turn in range(count):
        calls = [
            ToolCall(f"w{i}", "write_file", {"path": f"out/{tag}{i}.txt", "content": f"{turn}\n"})
            for i in range(10)
        ]
        # a turn writes files it created itself earlier: read state allows it
        now = attrs.evolve(ctx, interrupt=trio.Event())
        start = time.perf_counter()
        results = await run_batch(calls, registry, now)
        times.append((time.perf_counter() - start) * 1000)
        bad = [r.outcome.content for r in results if r.outcome.is_error]
        if bad:
            raise RuntimeError(f"a write failed: {bad[0]}")
    return times


def measure(files: int, reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-guards-") as tmp:
        root = Path(tmp)
        home, work = root / "home", root / "work"
        work.mkdir()
        _tree(work, files)
        policy = PathPolicy.from_environment({"HOME": str(home)})
        paths = _paths(work, home)
        flip = [policy.check_write, policy.check_read]

        def check(path: str, _state: list[int] = [0]) -> None:  # noqa: B006 - a counter
            _state[0] ^= 1
            flip[_state[0]](path)

        check_us = _time_us(check, paths, reps)
        real_us = _time_us(os.path.realpath, paths, reps)

        repo = ShadowRepo.for_dir(root / "cp-bench", work)
        start = time.perf_counter()
        repo.snapshot("first")
        first_ms = (time.perf_counter() - start) * 1000
        incremental: list[float] = []
        unchanged: list[float] = []
        for rep in range(reps):
            for i in range(10):
                (work / f"pkg{i}" / f"mod{i}.py").write_text(f"VALUE = {rep}\n")
            start = time.perf_counter()
            repo.snapshot(f"step {rep}")
            incremental.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            repo.snapshot("nothing changed")
            unchanged.append((time.perf_counter() - start) * 1000)

        async def turns() -> tuple[list[float], list[float]]:
            ctx = ToolContext.create(work, root / "spill", guard=policy)
            off = await _turns(ctx, work, reps, "off")
            service = CheckpointService(root=root / "cp-turns")
            await service.before_command(ctx, work, "rm -rf nothing")  # the first snapshot
            on_ctx = attrs.evolve(ctx, services={CheckpointService: service})
            on = await _turns(on_ctx, work, reps, "on")
            return off, on

        off, on = trio.run(turns)
    off_ms, on_ms = statistics.median(off), statistics.median(on)
    return {
        "files": files,
        "reps": reps,
        "path_check_us": round(check_us, 2),
        "realpath_us": round(real_us, 2),
        "path_check_ratio": round(check_us / real_us, 2) if real_us else None,
        "checkpoint_first_ms": round(first_ms, 1),
        "checkpoint_incremental_ms": round(statistics.median(incremental), 1),
        "checkpoint_unchanged_ms": round(statistics.median(unchanged), 1),
        "turn_off_ms": round(off_ms, 2),
        "turn_on_ms": round(on_ms, 2),
        "turn_overhead_ms": round(on_ms - off_ms, 2),
    }


def render(figures: dict[str, Any]) -> str:
    width = max(len(k) for k in figures)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in figures.items())


def main(json_output: bool, quick: bool, reps: int) -> int:
    figures = measure(files=200 if quick else 1000, reps=max(1, reps))
    print(json.dumps(figures) if json_output else render(figures))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.guards")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    sys.exit(main(args.json, args.quick, args.reps))
