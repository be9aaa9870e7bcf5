"""Run the runtime benchmark with tiny sizes so it keeps working (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

from bench.runtime import TARGETS, Sizes, measure, render


async def test_runtime_benchmark_produces_every_figure() -> None:
    results = await measure(Sizes.quick(), reps=1)
    for key in TARGETS:
        assert results[key] > 0, key
        assert isinstance(results["targets_met"][key], bool)
    details = results["details"]
    assert details["bytes_per_idle"]["actors"] > 0
    assert details["cast_msgs_per_s"]["raw_trio"] > 0
    table = render(results)
    assert "spawn_ratio" in table and "cancel_ratio" in table


def test_cli_prints_json_with_the_required_keys() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "runtime", "--quick", "--json", "--reps", "1"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    data = json.loads(out.stdout)
    assert set(TARGETS) <= set(data)


def test_cli_rejects_bad_repetitions() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "runtime", "--reps", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "--reps must be >= 1" in out.stderr
