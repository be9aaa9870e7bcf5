"""On resume, the stored system prompt is sent again byte for byte (issue 24, item 6; seed #18).

A real store and the fake provider: a session runs a turn, is closed, and is
started again with the same id (as after a daemon restart); the context file
changed in between, so a fresh build would differ.
"""

from __future__ import annotations

import json
from pathlib import Path

import trio

from hermes.fake import FakeProvider, Reply
from hermes.store import StoreClient
from hermes.store.prompt_queries import GetPrompt

from .conftest import SessionFactory
from .helpers import system_text


def system_of(fake: FakeProvider, index: int) -> str:
    return json.dumps(fake.message_requests[index].body["system"], sort_keys=True)


async def first_run(open_session: SessionFactory, fake: FakeProvider, workdir: Path) -> str:
    (workdir / "AGENTS.md").write_text("Rule: run make verify.\n")
    session = await open_session()
    fake.enqueue(Reply.of("first"))
    with trio.fail_after(10):
        await session.run("one")
        await session.close("the daemon stops")
    (workdir / "AGENTS.md").write_text("CHANGED: a new rule.\n")
    return session.id


async def test_a_resumed_session_sends_its_stored_prompt_byte_for_byte(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path, store: StoreClient
) -> None:
    session_id = await first_run(open_session, fake, workdir)
    resumed = await open_session(session_id=session_id)
    fake.enqueue(Reply.of("second"))
    with trio.fail_after(10):
        await resumed.run("two")
    assert system_of(fake, 1) == system_of(fake, 0)
    assert "CHANGED" not in system_text(fake.message_requests[1].body)
    stored = await store.request(GetPrompt(session_id))
    assert stored is not None and (stored.model, stored.cwd) == ("claude-test", str(workdir))
    # A new session builds its own (the context file as it is now).
    other = await open_session()
    fake.enqueue(Reply.of("third"))
    with trio.fail_after(10):
        await other.run("three")
    assert "CHANGED" in system_text(fake.message_requests[2].body)


async def test_another_model_or_working_directory_rebuilds_it(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path, store: StoreClient
) -> None:
    session_id = await first_run(open_session, fake, workdir)
    resumed = await open_session(session_id=session_id, model="claude-other")
    fake.enqueue(Reply.of("second"))
    with trio.fail_after(10):
        await resumed.run("two")
        await resumed.close("again")
    assert "CHANGED" in system_text(fake.message_requests[1].body)
    stored = await store.request(GetPrompt(session_id))
    assert stored is not None and stored.model == "claude-other"  # the rebuilt one is kept

    elsewhere = workdir.parent / "elsewhere"
    elsewhere.mkdir()
    again = await open_session(session_id=session_id, model="claude-other", cwd=elsewhere)
    fake.enqueue(Reply.of("third"))
    with trio.fail_after(10):
        await again.run("three")
    text = system_text(fake.message_requests[2].body)
    assert f"Working directory: {elsewhere}" in text and "CHANGED" not in text
