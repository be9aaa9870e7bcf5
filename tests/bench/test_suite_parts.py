"""The suite's pure parts: the transcript check, the fake's rules, the numbers and the charts."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path

import apsw

from bench.suite import fake, figures, svg
from bench.suite.sizes import Sizes
from bench.suite.transcripts import check_store
from hermes.codec import pack_blocks
from hermes.fake import Endless, Hang, MessagesRequest, Reply, ToolUse
from hermes.fake.records import RequestRecord
from hermes.model.types import ContentBlock, TextBlock, ToolResultBlock, ToolUseBlock
from hermes.store.schema import migrate


def _db(path: Path, sessions: dict[str, list[tuple[str, tuple[ContentBlock, ...]]]]) -> None:
    conn = apsw.Connection(str(path))
    migrate(conn)
    now = time.time()
    for sid, messages in sessions.items():
        conn.execute(
            "INSERT INTO sessions (id, model, created_at, updated_at) VALUES (?, 'm', ?, ?)",
            (sid, now, now),
        )
        for seq, (role, blocks) in enumerate(messages):
            conn.execute(
                "INSERT INTO messages (session_id, seq, role, content, text, created_at) "
                "VALUES (?, ?, ?, ?, '', ?)",
                (sid, seq, role, pack_blocks(blocks), now),
            )
    conn.close()


def test_the_transcript_check_finds_each_broken_history(tmp_path: Path) -> None:
    use = ToolUseBlock("t1", "terminal", {"command": "true"})
    result = ToolResultBlock("t1", "ok")
    _db(
        tmp_path / "h.db",
        {
            "good": [
                ("user", (TextBlock("hi"),)),
                ("assistant", (TextBlock("running"), use)),
                ("user", (result,)),
                ("assistant", (TextBlock("done"),)),
            ],
            "twice": [
                ("user", (TextBlock("hi"),)),
                ("assistant", (TextBlock("a"),)),
                ("assistant", (TextBlock("b"),)),
            ],
            "open": [
                ("user", (TextBlock("hi"),)),
                ("assistant", (ToolUseBlock("t2", "terminal", {}),)),
            ],
            "double": [
                ("user", (TextBlock("hi"),)),
                ("assistant", (ToolUseBlock("t3", "terminal", {}),)),
                ("user", (ToolResultBlock("t3", "a"), ToolResultBlock("t3", "b"))),
            ],
        },
    )
    report = check_store(tmp_path / "h.db")
    assert report["sessions"] == 4
    assert report["invalid"] == 3
    problems = "\n".join(report["problems"])
    assert "twice: " in problems and "roles must alternate" in problems
    assert "open: tool_use ['t2'] never got a result" in problems
    assert "double: " in problems and "more than one tool_result" in problems
    assert "good:" not in problems


def _request(body: dict[str, object]) -> MessagesRequest:
    record = RequestRecord(1, "req", "POST", "/v1/messages", [], b"", 0.0, 0.0)
    return MessagesRequest(body, record)


def _parent(text: str) -> MessagesRequest:
    return _request(
        {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": text}]}
    )


def test_the_fake_answers_by_marker_and_tags_each_request() -> None:
    tools = fake.respond(_parent("bench:tools #s1 turn 0"))
    assert isinstance(tools, Reply)
    assert [b.name for b in tools.content if isinstance(b, ToolUse)] == ["read_file", "terminal"]
    assert isinstance(fake.respond(_parent("bench:endless #v1")), Endless)
    fan = fake.respond(_parent("bench:fanout 3 #f2"))
    assert isinstance(fan, Reply)
    (call,) = [b for b in fan.content if isinstance(b, ToolUse)]
    assert call.input is not None
    assert [t["goal"] for t in call.input["tasks"]] == [
        f"bench child task {i} #f2-{i}" for i in range(3)
    ]
    child = _request(
        {
            "model": "m",
            "max_tokens": 10,
            "system": "You are a subagent.\n# Your task (sa-1-x)\nbench parked child 0 #p1-0",
            "messages": [{"role": "user", "content": "Begin your task"}],
        }
    )
    assert isinstance(fake.respond(child), Hang)
    assert fake.tag_of(child.body) == "p1-0"
    assert fake.tag_of(_parent("bench:sleep #v3 cycle 2").body) == "v3"
    review = _parent("all good\n\n[Background memory review; the user is not reading this.]")
    answer = fake.respond(review, aux_delay=0.3)
    assert isinstance(answer, Reply) and answer.delay == 0.3


def test_percentiles_and_growth() -> None:
    assert figures.percentile([], 0.5) == 0.0
    assert figures.percentile([3.0, 1.0, 2.0], 0.99) == 3.0
    lat = figures.latency_ms([0.001 * i for i in range(1, 101)])
    assert (lat["n"], lat["p50"], lat["p99"], lat["max"]) == (100, 50.5, 99.0, 100.0)
    assert figures.growth([10.0] * 50) == 0.0
    assert figures.growth([10.0] * 25 + [12.0] * 25) > 0.15


def test_charts_are_well_formed_svg() -> None:
    for chart in (
        svg.cdf({"ws": [1.0, 2.0, 40.0], "cli": [300.0]}, "cancel", "ms", log_x=True),
        svg.histogram([1.0, 1.5, 9.0], "turns", "ms"),
        svg.histogram([], "none", "ms"),
        svg.lines({"rss": [(0, 100.0), (10, 101.0)]}, "rss", "loops", "MiB", zero=False),
        svg.bars({"tool_worker": 3.0, "watcher": 1.0}, "crashes", "n"),
    ):
        assert ET.fromstring(chart).tag.endswith("svg")


def test_smoke_sizes_are_valid_and_flags_override() -> None:
    Sizes.smoke().check()
    Sizes().check()
    assert Sizes.smoke().with_flags({"sessions": 7, "turns": None}).sessions == 7
