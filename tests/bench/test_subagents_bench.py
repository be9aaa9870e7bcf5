"""Run the subagent benchmark with tiny sizes so it keeps working (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

from bench.subagents import Sizes
from bench.subagents_fake import CHILD_DONE, DONE, respond
from hermes.fake import Endless, MessagesRequest, Reply, Text, ToolUse
from hermes.fake.records import RequestRecord


def test_subagents_benchmark_reports_every_figure_and_keeps_its_invariants() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "subagents", "--quick", "--json", "--reps", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.stdout, out.stderr
    data = json.loads(out.stdout)
    # Every child completed, every cancel left no child and no sleep behind.
    assert data["problems"] == []
    assert out.returncode == 0, out.stderr
    quick = Sizes.quick()
    fanout = data["fanout_children"]
    assert fanout["children"] == quick.sessions * quick.children
    assert fanout["cpu_us_per_child_turn"] > 0 and fanout["ratio_to_direct_call"] > 0
    assert fanout["daemon_high_water"] >= quick.children
    cancel = data["fanout_cancel_ms"]
    assert cancel["n"] == quick.cancels
    assert data["fanout_cancel_p99_ms"] == cancel["p99"] > 0
    # The direct floor ran as often, interleaved, and left no sleep behind either.
    direct = cancel["direct"]
    assert direct["n"] == quick.cancels == len(direct["samples"]) == len(cancel["samples"])
    assert direct["p50"] > 0
    assert data["fanout_cancel_ratio_p50"] == cancel["ratio_p50"] == cancel["p50"] / direct["p50"]
    assert data["idle_child_kb"] >= 0
    # Judged by the ratio to the interleaved floor; the absolute p99 is reported beside it.
    assert set(data["targets_met"]) == {"fanout_cancel_ratio_p50"}


def _request(system: str, messages: list[dict[str, object]]) -> MessagesRequest:
    body = {"model": "m", "max_tokens": 10, "system": system, "messages": messages}
    return MessagesRequest(body, RequestRecord(1, "req", "POST", "/v1/messages", [], b"", 0.0, 0.0))


def test_the_scripted_fake_routes_parents_and_children() -> None:
    parent = respond(_request("you are hermes", [{"role": "user", "content": "bench:fanout 3"}]))
    assert isinstance(parent, Reply)
    use = next(b for b in parent.content if isinstance(b, ToolUse))
    assert use.name == "delegate_task" and len(use.input["tasks"]) == 3  # type: ignore[index]
    child = respond(
        _request(
            "# Your task (sa-1-x)\n\nbench child task 0", [{"role": "user", "content": "Begin"}]
        )
    )
    assert isinstance(child, Reply) and child.content == (Text(CHILD_DONE),)
    stream = respond(
        _request(
            "# Your task (sa-1-x)\n\nbench stream child 0",
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
                },
            ],
        )
    )
    assert isinstance(stream, Endless)
    done = respond(
        _request(
            "you are hermes",
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
                },
            ],
        )
    )
    assert isinstance(done, Reply) and done.content == (Text(DONE),)
