"""daemon.stats and daemon.heap against a real daemon process."""

from __future__ import annotations

import pytest
import trio

from hermes.gateway.client import GatewayError, connect
from tests.hermes.daemon.daemon_proc import running_daemon
from tests.hermes.gateway.test_gateway import new_session, until


async def test_stats_count_the_daemon_and_heap_needs_tracing(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with running_daemon(tmp_path_factory.mktemp("stats")) as daemon:
        with trio.fail_after(30):
            async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
                before = await client.call("daemon.stats")
                session = await new_session(client)
                await client.call("events.subscribe", session=session)
                await client.call("prompt.submit", session=session, text="hello")
                await until(client, "turn.completed", session)
                during = await client.call("daemon.stats", collect=True)
                with pytest.raises(GatewayError) as info:
                    await client.call("daemon.heap")
    assert before["pid"] == daemon.proc.pid  # type: ignore[union-attr]
    assert before["gc_collected"] is None and during["gc_collected"] >= 0
    assert during["sessions_live"] == before["sessions_live"] + 1
    assert during["actors"] > before["actors"] and during["trio_tasks"] > during["actors"]
    assert during["rss_bytes"] > 10 * 2**20 and during["fds"] > 3 and during["threads"] >= 1
    assert info.value.code == "unavailable" and "PYTHONTRACEMALLOC" in info.value.message
    # The collector's pause histogram: the full collection ``collect`` asked for is in it.
    pauses = during["gc"]
    full = pauses["generations"][2]
    assert full["collections"] >= 1 + before["gc"]["generations"][2]["collections"]
    assert sum(full["histogram_ms"].values()) == full["collections"]
    assert full["max_ms"] > 0 and pauses["pause_ms"]["max"] >= pauses["pause_ms"]["p99"] > 0
    assert pauses["threshold"][0] >= 700  # the daemon's tuned thresholds


async def test_heap_reports_growth_between_two_calls(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("heap")
    with running_daemon(root, None, PYTHONTRACEMALLOC="2") as daemon:
        with trio.fail_after(60):
            async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
                first = await client.call("daemon.heap", limit=5)
                for _ in range(3):
                    await new_session(client)
                second = await client.call("daemon.heap", limit=5)
    assert first["growth"] is None and len(first["top"]) == 5
    assert second["traced_bytes"] > 0 and len(second["growth"]) == 5
    assert {"file", "line", "size", "count", "size_diff", "count_diff"} <= set(second["growth"][0])
