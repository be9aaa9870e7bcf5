"""The subagent spawn pause over WebSocket, HTTP and the CLI, on a real daemon (issue 24,
item 7), with ``[subagents]`` and ``model.fallback_models`` set in its config file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import trio

from hermes.gateway.client import Client, connect
from tests.hermes.daemon.daemon_proc import CLI_BOUND, LONG_PROMPT, Daemon, running_daemon
from tests.hermes.gateway.test_gateway import ahttp, new_session, until

CONFIG = """
[model]
fallback_models = ["claude-fallback"]
[review]
enabled = false
[subagents]
max_concurrent_children = 2
max_iterations = 7
admission = "reject"
"""
STORY = LONG_PROMPT.replace("please tell me", "tell me")
PARALLEL = f"do these in parallel: {STORY}; {STORY.replace('word', 'term')}"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("spawn-pause"), CONFIG) as d:
        yield d


async def _delegating_turn(client: Client) -> tuple[str, list[dict[str, Any]]]:
    """A turn whose demo reply delegates two tasks; its events up to its end."""
    session = await new_session(client)
    await client.call("events.subscribe", session=session)
    await client.call("prompt.submit", session=session, text=PARALLEL)
    return session, await until(client, "turn.completed", session)


def _delegations(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e["payload"]
        for e in events
        if e["type"] == "tool.completed" and e["payload"]["name"] == "delegate_task"
    ]


async def test_pause_refuses_delegations_until_resumed(daemon: Daemon) -> None:
    with trio.fail_after(CLI_BOUND * 2):
        async with connect(daemon.endpoint) as client:
            assert await client.call("subagents.status") == {"paused": False}
            assert await client.call("subagents.pause") == {"paused": True}
            assert (await client.call("daemon.status"))["subagents_paused"] is True
            session, events = await _delegating_turn(client)
            (refused,) = _delegations(events)
            assert refused["is_error"], refused
            assert await client.call("subagent.list", session=session) == []

            status, body = await ahttp(daemon, "GET", "/subagents")
            assert (status, body["result"]) == (200, {"paused": True})
            status, body = await ahttp(daemon, "POST", "/subagents/resume", {})
            assert (status, body["result"]) == (200, {"paused": False})

            session, events = await _delegating_turn(client)
            (ran,) = _delegations(events)
            assert not ran["is_error"], ran
            rows = await client.call("subagent.list", session=session)
            assert len(rows) == 2, rows


def test_the_cli_pauses_resumes_and_shows(daemon: Daemon) -> None:
    paused = daemon.cli("subagents", "pause")
    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.strip() == "subagent spawning is paused"
    shown = daemon.cli("subagents", "status", "--json")
    assert shown.returncode == 0 and '"paused": true' in shown.stdout, shown.stdout
    resumed = daemon.cli("subagents", "resume")
    assert resumed.stdout.strip() == "subagent spawning is allowed", resumed.stderr
