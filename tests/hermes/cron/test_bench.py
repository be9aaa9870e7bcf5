"""``python -m bench scheduler`` at tiny sizes, so the benchmark does not rot."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_scheduler_benchmark_runs_and_reports_its_figures() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "scheduler", "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["jobs"] == 500 and figures["due"] == 50
    assert figures["fire_lateness_p99_ms"] >= 0 and figures["idle_job_bytes"] > 0
    assert 0 <= figures["scheduler_cpu_idle_pct"] < 100
