"""Run the model benchmark with tiny sizes so it keeps working (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_model_benchmark_reports_every_figure() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "model", "--quick", "--json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=180,
    )
    data = json.loads(out.stdout)
    assert data["client_overhead_ratio"] > 0
    # Read in 10 ms clock ticks: a tiny run may round to zero, never below.
    assert data["fake_server_us_per_request"] >= 0
    assert set(data["calls_per_s"]) == {"1", "16"}
    assert all(rate > 0 for rate in data["calls_per_s"].values())
