"""Run the supervision benchmark with tiny sizes so it keeps working (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

from bench.supervision import Sizes, measure, render


async def test_supervision_benchmark_produces_every_figure() -> None:
    results = await measure(Sizes.quick(), reps=1)
    assert results["restart_us"] > 0
    assert results["start_stop_scaling"] > 0
    assert results["dynamic_shutdown_ratio"] >= 1.0  # cannot beat one cleanup
    details = results["details"]
    for mode in ("scaling_tuned_gc", "scaling_default_gc"):
        assert details[mode]["raw_scaling"] > 0
    assert "dynamic_shutdown_ratio" in render(results)


def test_cli_prints_json_with_the_required_keys() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "supervision", "--quick", "--json", "--reps", "1"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    data = json.loads(out.stdout)
    assert {"restart_us", "start_stop_scaling", "dynamic_shutdown_ratio"} <= set(data)
