"""Run the compression benchmark with tiny sizes so it keeps working (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.compression import TARGETS, Sizes, fake_summary, transcript
from hermes.compression import CompressionSettings, accept_summary, validate_transcript
from hermes.model import ToolResultBlock, ToolUseBlock

ROOT = Path(__file__).resolve().parents[2]
RUN = (
    "import logging, sys; logging.basicConfig(level=logging.ERROR); "
    "from bench import compression; sys.exit(compression.main(True, True, 2))"
)


def test_compression_benchmark_reports_every_figure_and_keeps_its_invariants() -> None:
    out = subprocess.run(
        [sys.executable, "-c", RUN], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert out.stdout, out.stderr
    data = json.loads(out.stdout)
    # Every compaction was valid, recorded and archived whole; every review was
    # cancelled by the next prompt, wrote nothing, and that prompt's turn completed.
    assert data["problems"] == []
    assert out.returncode == 0, out.stderr
    quick = Sizes.quick()

    parts = ("plan_ms", "finish_ms", "validate_ms", "commit_ms")
    assert all(data[p] > 0 for p in parts)
    assert data["compaction_ms"] >= max(data[p] for p in parts)
    assert data["load_ms"] > 0 and data["compaction_load_ratio"] > 0
    compaction = data["details"]["compaction"]
    assert compaction["messages_before"] == quick.messages
    assert 0 < compaction["messages_after"] < quick.messages
    assert compaction["tool_results_pruned"] > 0

    review = data["review_cancel_ms"]
    assert data["review_cancel_p99_ms"] == review["gone"]["p99"] > 0
    for figure in (review["gone"], review["prompt_returned"], review["disconnect_seen"]):
        assert figure["n"] == quick.reviews
        assert 0 < figure["p50"] <= figure["p99"] <= figure["max"]
    assert data["raw_cancel_ms"]["n"] == quick.raw_cancels
    assert data["review_cancel_raw_ratio"] > 0

    assert set(data["targets_met"]) == set(TARGETS)
    assert all(isinstance(met, bool) for met in data["targets_met"].values())


@pytest.mark.parametrize("count", [4, 60, 200])
def test_the_transcript_is_valid_with_tool_calls_and_large_results(count: int) -> None:
    messages = transcript(count)
    assert len(messages) == count
    assert validate_transcript(messages) == []
    uses = [b for m in messages for b in m.content if isinstance(b, ToolUseBlock)]
    results = [b for m in messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert len(uses) == len(results) > 0
    if count >= 8:
        assert any(len(str(r.content)) >= 6_000 for r in results)


def test_the_transcript_needs_an_even_count() -> None:
    with pytest.raises(ValueError, match="even count"):
        transcript(7)


def test_the_fake_summary_passes_the_summary_check() -> None:
    text = fake_summary(transcript(8))
    assert accept_summary(text, CompressionSettings()) == text
