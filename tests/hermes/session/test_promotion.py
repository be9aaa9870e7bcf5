"""Foreground terminal calls promoted to the background, through a session (issue 24, item 3).

A command that would detach (``nohup``, a trailing ``&``, a dev server) and a
``timeout`` over ``[tools] foreground_max_timeout`` start as background
processes; the model's tool result carries the note and the process tool
lists the process.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest
import trio

from actors import ActorSystem
from hermes.daemon.config import load_config
from hermes.daemon.session_settings import tool_registry
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionConfig, SessionDeps, SessionHandle, TurnEnd, start_session
from hermes.store import StoreClient

from .helpers import assert_valid, completed_results, result_text, results_by_id

PROC_ID = re.compile(r"Started background process (proc_\w+)")


async def _promoted_then_listed(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, command: str
) -> tuple[str, str]:
    """Run ``command`` in the foreground, then ``process list``; the two results' texts."""
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": command, "timeout": 30}, id="toolu_run")),
        Reply.of(ToolUse("process", {"action": "list"}, id="toolu_list")),
        Reply.of("it runs"),
    )
    blocks = await completed_results(session, store, "start it")
    return result_text(blocks["toolu_run"]), result_text(blocks["toolu_list"])


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("nohup sleep 30 > /dev/null 2>&1 &", "it uses nohup"),
        ("sleep 30 &", "it ends with '&'; the '&' was removed"),
        (
            "python3 -m http.server 0 --bind 127.0.0.1",
            "python3 -m http.server is a server or watcher that keeps running",
        ),
    ],
)
async def test_a_detaching_command_is_promoted_and_listed(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, command: str, why: str
) -> None:
    ran, listed = await _promoted_then_listed(session, fake, store, command)
    found = PROC_ID.search(ran)
    assert found is not None, ran
    assert "would keep running after the line returns" in ran and why in ran, ran
    assert "started in the background instead" in ran
    assert found.group(1) in listed and "running" in listed, listed
    await session.close()


async def test_a_timeout_over_the_configured_cap_runs_in_the_background(
    system: ActorSystem,
    config: SessionConfig,
    deps: SessionDeps,
    fake: FakeProvider,
    store: StoreClient,
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[tools]\nforeground_timeout = 2\nforeground_max_timeout = 3\n")
    registry = tool_registry(load_config(path, env={}))
    session = await start_session(system, config, attrs.evolve(deps, registry=registry))
    command = "sleep 0.5; echo finished-late"
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": command, "timeout": 60}, id="toolu_long")),
        Reply.of("started"),
        Reply.of("it finished"),  # the turn the completion notice starts
    )
    with session.subscribe() as sub, trio.fail_after(30):
        first = await session.run("run the long job")
        assert first.reason is TurnEnd.COMPLETED
        async for event in sub.receive:
            if event.type == "TurnCompleted" and event.payload.turn == 2:
                break
    transcript = await store.load(session.id)
    assert_valid(transcript)
    text = result_text(results_by_id(transcript)["toolu_long"])
    assert PROC_ID.search(text), text
    assert "timeout=60 s is over the foreground limit of 3 s" in text
    assert "you will be notified when it finishes" in text
    notices = [m.text() for m in transcript.messages if m.role == "user"][1:]
    assert any("finished-late" in t for t in notices), notices
    await session.close()


async def test_an_explicit_background_call_gets_no_note(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "sleep 30 &", "background": True}, id="toolu_bg")),
        Reply.of("ok"),
    )
    with trio.fail_after(30):
        await session.run("start it")
    text = result_text(results_by_id(await store.load(session.id))["toolu_bg"])
    assert PROC_ID.search(text) and "[Note:" not in text, text
    await session.close()
