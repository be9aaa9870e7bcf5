"""The memory snapshot in the system prompt: a person's sessions get it, subagents never do."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import trio

from hermes.fake import FakeProvider, Reply
from hermes.memory import MemoryStore
from hermes.session import SessionDeps

from .conftest import SessionFactory
from .helpers import system_text


@pytest.fixture
def memory(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memories")
    store.add("user", "Prefers tabs over spaces.")
    return store


@pytest.fixture
def deps(deps: SessionDeps, memory: MemoryStore) -> SessionDeps:
    return attrs.evolve(deps, memory=memory)


async def test_an_attended_session_sees_memory_and_an_unattended_one_does_not(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("one"), Reply.of("two"))
    with trio.fail_after(10):
        attended = await open_session()
        await attended.run("hi")
        await attended.close()
        unattended = await open_session(unattended=True)
        await unattended.run("hi")
    first, second = (system_text(r.body) for r in fake.message_requests)
    assert "Prefers tabs over spaces." in first and "USER.md" in first
    assert "Prefers tabs over spaces." not in second and "USER.md" not in second
