"""Run the gateway benchmark with tiny sizes so it keeps working (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

from bench.gateway import Sizes


def test_gateway_benchmark_reports_every_figure() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "gateway", "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    quick = Sizes.quick()
    details = data["details"]
    assert details["ws_cancel_ms"]["n"] > 0 and details["http_cancel_ms"]["n"] > 0
    assert data["ws_cancel_p99_ms"] == details["ws_cancel_ms"]["p99"] > 0
    assert data["http_cancel_p99_ms"] == details["http_cancel_ms"]["p99"] > 0
    assert data["ws_clients_sustained"] == max(quick.levels)  # tiny levels: all sustained
    assert data["event_fanout_per_s"] > 0
    assert all(level["complete"] == level["clients"] for level in details["levels"])
    assert set(data["targets_met"]) == {
        "ws_cancel_p99_ms",
        "ws_clients_sustained",
        "flood_rss_growth_mb",
        "flood_rss_after_pct",
        "owner_connect_ms_under_lockout",
    }
    flood, lockout = details["flood"], details["lockout"]
    assert flood["requests_sent"] > flood["answers_read"] > 0
    growth = flood["peak_rss_mb"] - flood["start_rss_mb"]  # each rounded to 0.1
    assert abs(data["flood_rss_growth_mb"] - growth) <= 0.15
    assert flood["owner_connect_ms_after_flood"] > 0
    assert (
        lockout["idle_connections"] == 64
        and lockout["under_lockout_ms"]["n"] == quick.lockout_samples
    )
    assert data["owner_connect_ms_under_lockout"] > 0 and data["owner_connect_ms_baseline"] > 0
