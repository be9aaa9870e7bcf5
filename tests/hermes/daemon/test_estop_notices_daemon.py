"""A process notice held by ``hermes pause`` outlives a daemon restart (issue 27, item 4;
seed #218): a real daemon, a real background process, the fake provider as the model."""

from __future__ import annotations

import time
from pathlib import Path

import trio

from hermes.fake import FakeProvider, MessagesRequest, Reply, ToolUse
from hermes.gateway.client import connect
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon
from tests.hermes.gateway.fake_thread import ThreadedFake
from tests.hermes.gateway.test_gateway import new_session, until

START = "start the build"
MARK = "build-2-done"
"""What the build prints (its command, which the model's own request repeats, does not
hold it: ``echo build-$((1 + 1))-done``)."""
SCENARIO_BOUND = CLI_BOUND * 4
"""A CLI command (pause or resume, a fresh interpreter bounded by CLI_BOUND alone) and a
few turns per half, on a loaded box."""


def _provider(go: Path) -> FakeProvider:
    build = f"until [ -f {go} ]; do sleep 0.05; done; echo build-$((1 + 1))-done"

    def reply(req: MessagesRequest) -> Reply:
        text = req.last_user_text()
        if MARK in text:
            return Reply.of("noted: the build finished")
        if req.tool_results():
            return Reply.of("the build runs in the background")
        if text == START:
            args = {"command": build, "background": True, "notify_on_complete": True}
            return Reply.of(ToolUse("terminal", args))
        return Reply.of("ok")

    fake = FakeProvider()
    fake.when(reply)
    return fake


def _sent(fake: FakeProvider) -> str:
    return "\n".join(r.raw_body.decode() for r in fake.message_requests)


def test_a_notice_held_by_the_stop_is_delivered_after_a_restart_and_resume(
    tmp_path: Path,
) -> None:
    go = tmp_path / "GO"
    with ThreadedFake(_provider(go)) as threaded:
        fake = threaded.provider
        config = f'[model]\nbase_url = "{fake.base_url}"\n[review]\nenabled = false\n'
        with running_daemon(tmp_path, config, ANTHROPIC_API_KEY="k", NO_PROXY="*") as daemon:
            held = daemon.paths.data_dir / "held-notices"
            session = trio.run(_build_and_pause, daemon)
            go.touch()  # the build ends during the stop: its notice is held, on disk too
            deadline = time.monotonic() + SCENARIO_BOUND
            while not list(held.glob("*.json")) and time.monotonic() < deadline:
                time.sleep(0.05)
            (kept,) = held.glob("*.json")
            assert MARK in kept.read_text()
            daemon.stop()
            daemon.start()  # the stop and the notice it holds are files: both outlive it
            trio.run(_resume, daemon, session, fake)
            assert not list(held.glob("*.json"))  # delivered: gone from the data directory


async def _build_and_pause(daemon: Daemon) -> str:
    with trio.fail_after(SCENARIO_BOUND):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            await client.call("events.subscribe", session=session)
            await client.call("prompt.submit", session=session, text=START)
            await until(client, "turn.completed", session)
            paused = await trio.to_thread.run_sync(lambda: daemon.cli("pause"))
            assert paused.returncode == 0, paused.stderr
            return session


async def _resume(daemon: Daemon, session: str, fake: FakeProvider) -> None:
    with trio.fail_after(SCENARIO_BOUND):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            await client.call("session.resume", session=session)
            await client.call("events.subscribe", session=session)
            assert MARK not in _sent(fake)  # still held: the stop is on after the restart
            resumed = await trio.to_thread.run_sync(lambda: daemon.cli("resume"))
            assert resumed.returncode == 0, resumed.stderr
            noticed = await until(client, "process.noticed", session)  # within 5 s
            assert MARK in noticed[-1]["payload"]["text"]
            await until(client, "turn.completed", session)
    assert MARK in _sent(fake)  # the model read the build's end
