"""``/compress`` and ``memory.*`` through a real daemon: WebSocket, HTTP and the CLI."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from hermes.gateway.client import GatewayError, connect
from hermes.memory import MemoryStore
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon
from tests.hermes.gateway.test_gateway import ahttp, new_session, until

CONFIG = """
[compression]
enabled = false  # only /compress: the figures below stay exact
protect_last = 2
tail_ratio = 0.001
[review]
enabled = false
"""


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("memory"), CONFIG) as d:
        yield d


async def acli(daemon: Daemon, *args: str) -> subprocess.CompletedProcess[str]:
    return await trio.to_thread.run_sync(lambda: daemon.cli(*args))


def memory_of(daemon: Daemon) -> MemoryStore:
    """The daemon's memory files, opened from this process (they share the file lock)."""
    return MemoryStore(daemon.paths.data_dir / "memories")


async def test_compress_over_websocket_http_and_cli(daemon: Daemon) -> None:
    with trio.fail_after(CLI_BOUND):
        async with connect(daemon.endpoint) as client:
            session = await new_session(client)
            await client.call("events.subscribe", session=session)
            for n in range(4):
                await client.call("prompt.submit", session=session, text=f"say marmalade {n}")
                await until(client, "turn.completed", session)
            before = await client.call("session.get", session=session)

            accepted = await client.call("session.compress", session=session, focus="marmalade")
            assert accepted["how"] == "compacting"
            seen = await until(client, "compaction.completed", session)
            done = seen[-1]["payload"]
            job = await until(client, "turn.completed", session)
            assert job[-1]["payload"]["detail"].startswith("compacted 8 messages")
            assert done["trigger"] == "request"
            assert done["messages_before"] == before["messages"] == 8
            assert done["messages_after"] < done["messages_before"]
            assert done["method"] in ("model", "static")
            after = await client.call("session.get", session=session)
            assert after["messages"] == done["messages_after"]
            assert 0 < after["context_tokens"] < before["context_tokens"]
            assert 0 < after["context_percent"] < 100 and after["reviewing"] is False
            # The replaced rows are archived, not lost: search still finds them.
            hits = await client.call("search", query="marmalade 1", session=session)
            assert any(h["archive_id"] == done["archive_id"] for h in hits)

            # Over HTTP; and a session with nothing to compact gets a clear skip event.
            status, body = await ahttp(daemon, "POST", f"/sessions/{session}/compress", {})
            assert status == 200 and body["result"]["how"] == "compacting"
            ended = await until(client, "turn.completed", session)
            assert ended[-1]["payload"]["turn"] == body["result"]["turn"]
            short = await new_session(client)
            await client.call("events.subscribe", session=short)
            await client.call("prompt.submit", session=short, text="hello")
            await until(client, "turn.completed", short)
            await client.call("session.compress", session=short)
            skipped = await until(client, "compaction.skipped", short)
            assert "nothing to compact" in skipped[-1]["payload"]["reason"]

            out = await acli(daemon, "compress", session, "--focus", "jam")
            assert out.returncode == 0, out.stderr
            assert "compacting" in out.stdout
            out = await acli(daemon, "compress", "no-such-session")
            assert out.returncode == 1 and "unknown_session" in out.stderr
            with pytest.raises(GatewayError) as info:
                await client.call("session.compress", session=session, focus=7)
            assert info.value.code == "invalid_params"


async def test_memory_show_pending_approve_and_reject(daemon: Daemon) -> None:
    memory = memory_of(daemon)
    memory.add("user", "Prefers answers in British English.")
    memory.add("memory", "The build runs with `make ci`.")
    kept = memory.propose("replace", "memory", "make ci", "The build runs with `make all`.")
    dropped = memory.propose("remove", "user", "British English")
    with trio.fail_after(CLI_BOUND):
        async with connect(daemon.endpoint) as client:
            shown = await client.call("memory.show")
            assert shown["user"]["entries"] == ["Prefers answers in British English."]
            assert shown["memory"]["cap"] == 2200 and shown["pending"] == 2

            out = await acli(daemon, "memory", "pending", "--json")
            assert out.returncode == 0, out.stderr
            rows: list[dict[str, Any]] = json.loads(out.stdout)
            assert {r["id"] for r in rows} == {kept.id, dropped.id}

            change = await client.call("memory.approve", proposal=kept.id)
            assert change["new"] == "The build runs with `make all`."
            status, body = await ahttp(daemon, "POST", f"/memory/pending/{dropped.id}/reject", {})
            assert status == 200, body
            with pytest.raises(GatewayError) as info:
                await client.call("memory.approve", proposal=dropped.id)
            assert info.value.code == "proposal_not_found"

    assert memory.entries("memory") == ["The build runs with `make all`."]
    assert memory.entries("user") == ["Prefers answers in British English."]
    assert memory.proposals() == []
    out = await acli(daemon, "memory")
    assert out.returncode == 0, out.stderr
    assert "make all" in out.stdout and "British English" in out.stdout
