"""``hermes pause`` reaches background delegations on a real daemon (issue 27, item 4;
seed #218): a running one is stopped, a new one refused, across a restart, and its
result reaches the parent's model once ``hermes resume`` cleared the stop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from hermes.fake import FakeProvider, Hang, MessagesRequest, Reply, ToolUse
from hermes.gateway.client import Client, connect
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon
from tests.hermes.gateway.fake_thread import ThreadedFake
from tests.hermes.gateway.test_gateway import new_session, until
from tests.hermes.subagents.conftest import child_of, is_parent

START = "start the audit"
AGAIN = "delegate again"
SCENARIO_BOUND = CLI_BOUND * 4
"""What each half waits for as a whole: a CLI command (pause or resume, a fresh interpreter
bounded by CLI_BOUND alone), several turns and the delegations they start or stop; on a
loaded two-core box it is their sum that has to fit (CLI_BOUND * 2 failed there)."""


def _parent(req: MessagesRequest) -> Reply | None:
    if not is_parent(req):
        return None
    text = req.last_user_text()
    if "Background delegation" in text:
        return Reply.of("noted the stopped delegation")
    if req.tool_results():
        return Reply.of("carrying on")
    if text == AGAIN:
        return Reply.of(ToolUse("delegate_task", {"goal": "count the files"}))
    if text == START:
        return Reply.of(ToolUse("delegate_task", {"goal": "audit the logs slowly"}))
    return Reply.of("ok")


def _provider() -> FakeProvider:
    fake = FakeProvider(demo_event_delay=0.03)
    fake.when(Hang(), predicate=child_of("audit the logs"))
    fake.when(_parent)
    return fake


def _sent(fake: FakeProvider) -> str:
    return "\n".join(r.raw_body.decode() for r in fake.message_requests)


async def _turn(client: Client, session: str, text: str) -> list[dict[str, Any]]:
    await client.call("prompt.submit", session=session, text=text)
    return await until(client, "turn.completed", session)


async def _until_rows(client: Client, session: str, state: str) -> list[dict[str, Any]]:
    while True:
        rows: list[dict[str, Any]] = await client.call("subagent.list", session=session)
        if rows and all(r["state"] == state for r in rows):
            return rows
        await trio.sleep(0.05)


def test_pause_stops_and_refuses_delegations_across_a_restart_until_resume(
    tmp_path: Path,
) -> None:
    with ThreadedFake(_provider()) as threaded:
        fake = threaded.provider
        config = f'[model]\nbase_url = "{fake.base_url}"\n[review]\nenabled = false\n'
        with running_daemon(tmp_path, config, ANTHROPIC_API_KEY="k", NO_PROXY="*") as daemon:
            session = trio.run(_start_and_pause, daemon)
            daemon.stop()
            daemon.start()  # the stop is the file: it holds across the restart
            trio.run(_after_restart, daemon, session, fake)


async def _start_and_pause(daemon: Daemon) -> str:
    with trio.fail_after(SCENARIO_BOUND):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            # A person's chat (an approver): code runs the top level's delegation in the
            # background (seed #252), which the emergency stop then ends.
            await client.call("events.subscribe", session=session, approvals=True)
            await _turn(client, session, START)
            await _until_rows(client, session, "running")
            paused = await trio.to_thread.run_sync(lambda: daemon.cli("pause"))
            assert paused.returncode == 0, paused.stderr
            assert "1 background subagent task(s) stopped" in paused.stdout, paused.stdout
            (row,) = await _until_rows(client, session, "interrupted")
            assert "emergency stop" in row["detail"], row
            status = await client.call("estop.status")
            assert status["stopped"] is True
            events = await _turn(client, session, AGAIN)  # a person's turn still runs
            (tool,) = [e for e in events if e["type"] == "tool.completed"]
            assert tool["payload"]["name"] == "delegate_task" and tool["payload"]["is_error"]
            return session


async def _after_restart(daemon: Daemon, session: str, fake: FakeProvider) -> None:
    assert "emergency stop is on" in _sent(fake)  # the refusal the model read
    assert "stopped by the emergency stop" not in _sent(fake)  # the result waits
    with trio.fail_after(SCENARIO_BOUND):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            assert (await client.call("estop.status"))["stopped"] is True
            await client.call("session.resume", session=session)
            # The chat is back: its delegations go to the background again (seed #252).
            await client.call("events.subscribe", session=session, approvals=True)
            events = await _turn(client, session, AGAIN)  # still refused after the restart
            (tool,) = [e for e in events if e["type"] == "tool.completed"]
            assert tool["payload"]["is_error"], tool
            assert "stopped by the emergency stop" not in _sent(fake)
            resumed = await trio.to_thread.run_sync(lambda: daemon.cli("resume"))
            assert resumed.returncode == 0 and "stopped work is not restarted" in resumed.stdout
            noticed = await until(client, "input.noticed", session)
            assert "stopped by the emergency stop" in noticed[-1]["payload"]["text"]
            await until(client, "turn.completed", session)
            assert "stopped by the emergency stop" in _sent(fake)  # the model read it
            await _turn(client, session, START)  # delegations start again
            await _until_rows(client, session, "running")
            await client.call("cancel", session=session)
