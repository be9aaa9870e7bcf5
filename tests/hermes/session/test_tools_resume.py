"""On resume, the stored tool list is sent again byte for byte (issue 24, item 6; seed #18).

A real store file and the fake provider across a restart: the first half runs
a turn in one actor system and stops it; the second opens a new actor system,
store and registry (the same tools, registered in another order) over the
same data directory and resumes the session by id.
"""

from __future__ import annotations

import json
from pathlib import Path

import trio

from actors import open_system
from hermes.fake import FakeProvider, Reply
from hermes.model import ModelClient
from hermes.session import SessionConfig, SessionDeps, start_session
from hermes.store import spawn_store
from hermes.store.prompt_queries import GetPrompt
from hermes.tools import ToolRegistry, default_registry

from .conftest import MODEL


def _part(fake: FakeProvider, index: int, key: str) -> str:
    return json.dumps(fake.message_requests[index].body[key])


def _reversed(registry: ToolRegistry) -> ToolRegistry:
    return ToolRegistry(reversed(list(registry)))


async def _run(
    data: Path,
    config: SessionConfig,
    client: ModelClient,
    registry: ToolRegistry,
    session_id: str | None,
    text: str,
) -> str:
    async with open_system("half", kill_grace=1.0, call_timeout=5.0) as system:
        store = await spawn_store(system, data, register=None)
        deps = SessionDeps(store=store, client=client, registry=registry)
        session = await start_session(system, config, deps, session_id=session_id)
        with trio.fail_after(20):
            await session.run(text)
            stored = await store.request(GetPrompt(session.id))
            await session.close("the daemon stops")
        assert stored is not None and stored.tools is not None
        assert [t.name for t in stored.tools] == [t.name for t in _first_order()]
        return session.id


def _first_order() -> tuple:  # type: ignore[type-arg]
    return default_registry().specs()


async def test_a_resumed_session_sends_its_stored_tools_byte_for_byte(
    fake: FakeProvider, client: ModelClient, tmp_path: Path, workdir: Path
) -> None:
    config = SessionConfig(model=MODEL, cwd=workdir, spill_dir=tmp_path / "spill")
    data = tmp_path / "data"
    fake.enqueue(Reply.of("first"))
    session_id = await _run(data, config, client, default_registry(), None, "one")
    live = _reversed(default_registry())
    assert [t.name for t in live.specs()] != [t.name for t in _first_order()]
    fake.enqueue(Reply.of("second"))
    await _run(data, config, client, live, session_id, "two")
    assert _part(fake, 1, "tools") == _part(fake, 0, "tools")
    assert _part(fake, 1, "system") == _part(fake, 0, "system")


async def test_a_changed_tool_set_keeps_the_order_drops_and_appends(
    fake: FakeProvider, client: ModelClient, tmp_path: Path, workdir: Path
) -> None:
    config = SessionConfig(model=MODEL, cwd=workdir, spill_dir=tmp_path / "spill")
    data = tmp_path / "data"
    fake.enqueue(Reply.of("first"))
    session_id = await _run(data, config, client, default_registry(), None, "one")
    first = [t["name"] for t in fake.message_requests[0].body["tools"]]
    gone = first[0]
    live = _reversed(default_registry())
    live.unregister(gone)
    async with open_system("again", kill_grace=1.0, call_timeout=5.0) as system:
        store = await spawn_store(system, data, register=None)
        deps = SessionDeps(store=store, client=client, registry=live)
        session = await start_session(system, config, deps, session_id=session_id)
        fake.enqueue(Reply.of("second"))
        with trio.fail_after(20):
            await session.run("two")
            stored = await store.request(GetPrompt(session_id))
            await session.close("done")
    sent = [t["name"] for t in fake.message_requests[1].body["tools"]]
    assert sent == first[1:]  # the stored order, less the tool no longer offered
    assert stored is not None and [t.name for t in stored.tools or ()] == sent
