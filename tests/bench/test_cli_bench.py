"""Run the CLI benchmark with tiny sizes so it keeps working (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

KEYS = (
    "cli_status_ratio",
    "cli_sessions_ratio",
    "cli_cancel_ratio",
    "daemon_ready_s",
    "daemon_ready_over_imports_s",
)


def test_cli_benchmark_reports_every_figure_and_every_command_succeeded() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "cli", "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    data = json.loads(out.stdout)
    assert data["problems"] == []  # every command and baseline exited 0
    assert out.returncode == 0, out.stderr
    for key in KEYS:
        assert isinstance(data[key], float)
    assert all(data[f"cli_{name}_ratio"] > 0 for name in ("status", "sessions", "cancel"))
    assert data["daemon_ready_s"] > 0 and data["daemon_imports_s"] > 0
    assert set(data["targets_met"]) == {*KEYS[:3], "daemon_ready_over_imports_s"}
