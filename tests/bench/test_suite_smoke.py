"""The load/chaos/soak suite at tiny sizes, so it keeps working (invariants, never timings)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.suite import SCENARIOS

FIGURES = {
    "sessions": {
        "turns_per_s",
        "model_calls_per_s",
        "turn_ms",
        "cpu_ratio",
        "daemon_cpu_ms_per_turn",
        "sdk_cpu_ms_per_call",
        "model_calls_per_turn",
    },
    "fanout": {
        "completion_s",
        "subagents_per_s",
        "peak_rss_mb",
        "idle_session_kb",
        "idle_subagent_kb",
    },
    "cancel": {
        "cancels",
        "to_event_ms",
        "to_stream_closed_ms",
        "to_procs_gone_ms",
        "by_surface",
        "load",
        "ws_cancel_load_ratio",
        "http_cancel_load_ratio",
        "status_load_ratio",
        "ws_cancel_p99_ms",
        "http_cancel_p99_ms",
        "status_p99_ms",
        "gc_pause_p99_ms",
        "control",
        "ws_cancel_floor_ratio",
        "http_cancel_floor_ratio",
        "status_floor_ratio",
        "ws_floor_p99_ms",
        "http_floor_p99_ms",
        "status_floor_p99_ms",
    },
    "steer": {"steer_to_delivered_ms", "steer_to_accepted_ms", "load"},
    "soak": {"loops", "loops_per_s", "growth", "series_growth", "end"},
    "chaos": {"crashes", "crashes_by_kind", "answered", "failed_recorded", "actor_cancel_ms"},
}
SHARED_INVARIANTS = {"daemon_stopped_cleanly", "no_process_left", "transcripts_valid"}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    """One ``python -m bench --smoke --json --report`` run of every scenario."""
    root = tmp_path_factory.mktemp("suite")
    tmp = root / "tmp"
    tmp.mkdir()
    report = root / "report.html"
    out = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--json", "--report", str(report)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    assert out.stdout, out.stderr
    data = json.loads(out.stdout)
    assert out.returncode == (0 if data["ok"] else 1), out.stderr
    return data, report.read_text(), tmp


def test_every_scenario_keeps_its_invariants(smoke: tuple[dict[str, Any], str, Path]) -> None:
    data, _, _ = smoke
    assert list(data["scenarios"]) == list(SCENARIOS)
    broken = {
        name: [k for k, ok in result["invariants"].items() if not ok]
        for name, result in data["scenarios"].items()
    }
    assert all(not b for b in broken.values()), (
        broken,
        {n: r["details"] for n, r in data["scenarios"].items()},
    )
    assert data["ok"] is True
    for result in data["scenarios"].values():
        assert set(result["invariants"]) >= SHARED_INVARIANTS
        assert result["details"]["shutdown"]["leaked_processes"] == 0
        assert result["details"]["transcripts"]["invalid"] == 0


def test_the_json_has_every_figure(smoke: tuple[dict[str, Any], str, Path]) -> None:
    data, _, _ = smoke
    assert data["suite"]["smoke"] is True
    assert set(data["suite"]["sizes"]) >= {"sessions", "turns", "soak_loops", "chaos_rate"}
    for name, keys in FIGURES.items():
        assert set(data["scenarios"][name]["figures"]) == keys, name
    sessions = data["scenarios"]["sessions"]
    turns = sessions["details"]["turns"]
    assert turns["answered"] == turns["accepted"] == 9  # 3 sessions x 3 turns
    assert sessions["figures"]["turn_ms"]["n"] == 9
    assert sessions["details"]["model_calls"] >= 18
    assert sessions["figures"]["cpu_ratio"] > 0
    cancel = data["scenarios"]["cancel"]["figures"]
    assert cancel["cancels"] == 9  # every (surface, kind) pair once
    assert cancel["to_event_ms"]["n"] == 9
    # Control under load: each request's p99 under load over its own idle p50.
    for name in ("ws_cancel", "http_cancel", "status"):
        idle, load = cancel["control"][name]["idle"], cancel["control"][name]["load"]
        assert idle["n"] > 0 and idle["p50"] > 0 and load["n"] > 0, name
        assert cancel[f"{name}_p99_ms"] == load["p99"]
        assert cancel[f"{name}_load_ratio"] == pytest.approx(load["p99"] / idle["p50"], rel=0.01)
        floor = cancel["control"][name]["floor_load"]
        assert floor["n"] == load["n"] and floor["p99"] > 0, name  # interleaved one for one
        ratio = cancel[f"{name}_floor_ratio"]
        assert ratio == pytest.approx(load["p99"] / floor["p99"], rel=0.02)
    assert cancel["ws_floor_p99_ms"] == cancel["control"]["ws_cancel"]["floor_load"]["p99"]
    assert cancel["http_floor_p99_ms"] == cancel["control"]["http_cancel"]["floor_load"]["p99"]
    judged = data["scenarios"]["cancel"]["targets"]["judged"]
    assert set(judged) == {
        "ws_cancel_floor_ratio",
        "http_cancel_floor_ratio",
        "status_floor_ratio",
        "gc_pause_p99_ms",
    }
    assert set(data["scenarios"]["cancel"]["targets"]["reported"]) == {
        "ws_cancel_load_ratio",
        "http_cancel_load_ratio",
        "status_load_ratio",
    }
    assert cancel["gc_pause_p99_ms"] >= 0
    soak = data["scenarios"]["soak"]["figures"]
    assert soak["end"]["trio_tasks"] > soak["end"]["actors"] > 0  # every actor has a task
    assert set(soak["growth"]) == {"rss_mb", "fds", "threads", "actors", "trio_tasks"}
    fanout = data["scenarios"]["fanout"]["details"]
    assert fanout["subagent_statuses"] == {"completed": 6}  # 2 sessions x 3 subagents
    assert data["scenarios"]["steer"]["figures"]["steer_to_delivered_ms"]["n"] == 3
    soak = data["scenarios"]["soak"]
    assert soak["figures"]["loops"] == 30
    assert len(soak["samples"]["series"]) >= 10
    assert data["scenarios"]["chaos"]["figures"]["crashes"] > 0


def test_the_report_is_html_with_plots(smoke: tuple[dict[str, Any], str, Path]) -> None:
    _, report, _ = smoke
    assert report.startswith("<!doctype html>")
    assert len(re.findall(r"<svg ", report)) >= 10
    assert "<script" not in report and "<link" not in report  # self-contained
    assert not re.search(r"""(?:src|href)=["']?https?:""", report)
    for name in SCENARIOS:
        assert f"<h2>{name} (" in report


def test_temporary_directories_are_removed(smoke: tuple[dict[str, Any], str, Path]) -> None:
    _, _, tmp = smoke
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sessions", "0"], "--sessions must be at least 1, got 0"),
        (["soak", "--soak-loops", "5"], "--soak-loops must be at least 10, got 5"),
        (["--chaos-rate", "0"], "--chaos-rate must be > 0"),
        (["nope"], "unknown benchmark or scenario 'nope'"),
        (["runtime", "sessions"], "run one per-issue benchmark at a time"),
        (["gateway", "--turns", "3"], "--turns applies to the suite's scenarios only"),
    ],
)
def test_bad_flags_are_refused_clearly(args: list[str], message: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", *args], capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 2
    assert message in out.stderr


def test_hermes_bench_runs_the_same_parser() -> None:
    from click.testing import CliRunner

    import hermes.cli.bench  # noqa: F401  (registers the command on the group)
    from hermes.cli import main

    result = CliRunner().invoke(main, ["bench", "--victims", "0"])
    assert result.exit_code == 2
    assert "hermes bench: error: --victims must be at least 1, got 0" in result.output
    result = CliRunner().invoke(main, ["bench", "--help"])
    assert result.exit_code == 0
    assert "usage: hermes bench" in result.output and "--soak-loops" in result.output
