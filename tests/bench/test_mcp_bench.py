"""Run the MCP benchmark with tiny sizes so it keeps working (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = (
    "import logging, sys; logging.basicConfig(level=logging.ERROR); "
    "from bench import mcp; sys.exit(mcp.main(True, True, 2))"
)


def test_mcp_benchmark_reports_every_figure_and_keeps_its_invariants() -> None:
    out = subprocess.run(
        [sys.executable, "-c", RUN], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert out.stdout, out.stderr
    data = json.loads(out.stdout)
    # Every call answered right, every cancel reached the server, every restart listed again.
    assert data["problems"] == []
    assert out.returncode == 0, out.stderr
    assert data["call_ms"] > 0 and data["bare_call_ms"] > 0 and data["mcp_call_ratio"] > 0
    assert data["cancel_ms"]["told"]["n"] == data["sizes"]["cancels"]
    assert data["mcp_cancel_p99_ms"] >= data["cancel_ms"]["told"]["p50"] > 0
    assert data["restart_ms"]["n"] == data["sizes"]["restarts"] and data["mcp_restart_ms"] > 0
    assert set(data["targets_met"]) == {"mcp_call_ratio", "mcp_cancel_p99_ms"}
