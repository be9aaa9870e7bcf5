"""Run the session benchmark with tiny sizes so it keeps working (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench.session import TARGETS, Sizes
from bench.session_fake import respond
from hermes.fake import Endless, MessagesRequest, Reply, Text, ToolUse
from hermes.fake.records import RequestRecord


def test_session_benchmark_reports_every_figure_and_keeps_its_invariants() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "session", "--quick", "--json", "--reps", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.stdout, out.stderr
    data = json.loads(out.stdout)
    # Every turn completed with three good tool results, every cancel settled the
    # transcript and killed the sleep, every steer reached the store and the model.
    assert data["problems"] == []
    assert out.returncode == 0, out.stderr
    quick = Sizes.quick()

    assert data["turn_overhead_ratio"] > 0
    overhead = data["details"]["turn_overhead"]
    assert len(overhead["ratios"]) == 2
    assert overhead["session_cpu_us_per_turn"] > 0
    assert overhead["direct_cpu_us_per_turn"] > 0
    # Prompt, reply, results, answer; results of slow calls may be flushed early.
    assert 4 <= overhead["store_writes_per_turn"] <= 8
    # The direct baseline made the very same store writes (its row's messages are
    # checked against the session's under ``problems``).
    assert overhead["direct_store_writes_per_turn"] == overhead["store_writes_per_turn"]

    cancel = data["cancel_ms"]
    assert data["cancel_p99_ms"] == cancel["all"]["p99"] > 0
    assert cancel["all"]["n"] == quick.cancels
    assert cancel["tool"]["n"] + cancel["stream"]["n"] == quick.cancels
    assert 0 < cancel["all"]["p50"] <= cancel["all"]["p99"] <= cancel["all"]["max"]
    assert cancel["open_tool_uses_after_cancel"] == 0
    assert cancel["sleep_left_running"] == 0

    steer = data["steer_delivery_ms"]
    assert steer["n"] == quick.steers
    assert 0 < steer["p50"] <= steer["p99"] <= steer["max"]
    assert steer["tool_completed_to_row"]["n"] == quick.steers

    assert set(data["targets_met"]) == set(TARGETS)
    assert all(isinstance(met, bool) for met in data["targets_met"].values())


def _request(*messages: dict[str, object]) -> MessagesRequest:
    record = RequestRecord(1, "req", "POST", "/v1/messages", [], b"", 0.0, 0.0)
    return MessagesRequest({"model": "m", "max_tokens": 10, "messages": list(messages)}, record)


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ("bench:three-tools", ["read_file", "terminal", "read_file"]),
        ("bench:sleep", ["terminal"]),
        ("bench:wait-fifo", ["terminal"]),
        ("hello", []),
    ],
)
def test_the_scripted_model_answers_by_marker(text: str, tools: list[str]) -> None:
    reply = respond(_request({"role": "user", "content": text}))
    assert isinstance(reply, Reply)
    assert [b.name for b in reply.content if isinstance(b, ToolUse)] == tools


def test_the_scripted_model_streams_forever_and_acknowledges_steers() -> None:
    assert isinstance(respond(_request({"role": "user", "content": "bench:stream"})), Endless)
    steered = _request(
        {"role": "user", "content": "bench:wait-fifo"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "terminal", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "go"},
                {"type": "text", "text": "[Steer from the user: bench:steer-note 1]"},
            ],
        },
    )
    reply = respond(steered)
    assert isinstance(reply, Reply)
    assert [b.text for b in reply.content if isinstance(b, Text)] == ["steer received"]
