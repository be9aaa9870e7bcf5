"""``goal.*`` and ``loop.*`` over WebSocket and HTTP against a real daemon and a scripted judge."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.gateway.client import Client, GatewayError, connect
from tests.hermes.daemon.daemon_proc import Daemon, running_daemon
from tests.hermes.gateway.fake_thread import ThreadedFake
from tests.hermes.gateway.test_gateway import ahttp, new_session

JUDGE = "goal-judge"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    fake = FakeProvider()
    done = {"verdict": "done", "reason": "it said finished"}
    fake.when(Reply.of(ToolUse("verdict", done)), model=JUDGE)
    fake.when(Reply.of("finished the report"), last_user_text="write the report")
    fake.when(Reply.of("checked: all quiet\nLOOP_COMPLETE"), last_user_text="[/loop wakeup #")
    fake.when(Reply.of("ok"))
    config = (
        f'[goals]\njudge_model = "{JUDGE}"\n[loops]\nmin_interval = 1.0\n'
        '[approvals]\nmode = "manual"\n'
    )
    with ThreadedFake(fake) as served:
        root = tmp_path_factory.mktemp("goal-methods")
        full = f'[model]\nbase_url = "{served.base_url}"\n{config}'
        with running_daemon(root, full, ANTHROPIC_API_KEY="test-key", NO_PROXY="*") as d:
            yield d


async def until_update(client: Client, kind: str, status: str) -> dict[str, Any]:
    async for event in client.events:
        if event["type"] == kind and event["payload"]["status"] == status:
            payload: dict[str, Any] = event["payload"]
            return payload
    raise AssertionError("the connection closed")


async def test_goal_methods_set_judge_and_report_over_websocket(daemon: Daemon) -> None:
    with trio.fail_after(60):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            await client.call("events.subscribe", session=session)
            answer = await client.call("goal.set", session=session, text="write the report",
                                       max_turns=4)  # fmt: skip
            assert answer["goal"]["max_turns"] == 4 and answer["turn"] == 1
            assert answer["output"].startswith("goal set (4-turn budget): write the report")
            done = await until_update(client, "goal.updated", "done")
            assert done["message"] == "goal achieved: it said finished"
            got = await client.call("goal.get", session=session)
            assert got["goal"]["status"] == "done" and got["goal"]["turns_used"] == 1
            with pytest.raises(GatewayError) as info:
                await client.call("goal.pause", session=session)
            assert info.value.code == "invalid_params"
            assert "/goal pause: there is no goal" in info.value.message
            with pytest.raises(GatewayError) as info:
                await client.call("goal.command", session=session, text="make it so")
            assert "text must start with /goal, /subgoal or /loop" in info.value.message
            with pytest.raises(GatewayError) as info:
                await client.call("loop.set", session=session, prompt="x", every="soon")
            assert "every must be an interval like 30s" in info.value.message


async def test_loop_and_goal_routes_over_http(daemon: Daemon) -> None:
    with trio.fail_after(60):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            await client.call("events.subscribe", session=session)
            status, body = await ahttp(
                daemon, "POST", f"/sessions/{session}/loop", {"prompt": "watch", "every": "1s"}
            )
            assert status == 200, body
            assert body["result"]["loop"]["interval"] == 1.0
            update = await until_update(client, "loop.updated", "done")
            assert "the agent replied LOOP_COMPLETE" in update["message"]
            status, body = await ahttp(daemon, "GET", f"/sessions/{session}/goal")
            assert status == 200 and body["result"]["loop"]["status"] == "done", body
            status, body = await ahttp(
                daemon, "POST", f"/sessions/{session}/goal/command", {"text": "/goal pause x"}
            )
            assert status == 400, body
            assert "/goal pause takes nothing after it" in body["error"]["message"]
            status, body = await ahttp(daemon, "POST", f"/sessions/{session}/loop/stop")
            assert status == 400 and "there is no loop" in body["error"]["message"], body


def hermes(daemon: Daemon, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes", *args],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_the_cli_sets_shows_and_refuses_goals(daemon: Daemon) -> None:
    with trio.fail_after(90):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            await client.call("events.subscribe", session=session)
            done = await trio.to_thread.run_sync(
                hermes, daemon, "goal", session, "--turns", "3", "write", "the", "report"
            )
            assert done.returncode == 0, done.stderr
            assert "goal set (3-turn budget): write the report" in done.stdout
            assert "(turn 1 started)" in done.stdout
            await until_update(client, "goal.updated", "done")
        shown = await trio.to_thread.run_sync(hermes, daemon, "goal", "--json", session)
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["goal"]["status"] == "done"
        refused = await trio.to_thread.run_sync(
            hermes, daemon, "loop", session, "--times", "0", "x"
        )
        assert refused.returncode != 0
        assert "/loop --times N: N must be a number from 1 to 10000" in refused.stderr


def test_goal_typed_in_hermes_chat_reaches_the_session(daemon: Daemon) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "hermes", "chat", "--plain"],
        env=daemon.env,
        input="/goal status\n/subgoal more tests\n/loop --times x poll\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "[no goal set]" in run.stderr
    assert "/goal subgoal: there is no goal (set one with /goal TEXT)" in run.stderr
    assert "unknown command" not in run.stderr
