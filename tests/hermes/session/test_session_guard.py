"""The path guard through a real session turn: the fake provider asks, real files answer."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionHandle, TurnEnd
from hermes.store import StoreClient

from .conftest import SessionFactory
from .helpers import assert_valid, result_text, results_by_id


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))  # the session's guard is built from our environment
    monkeypatch.setenv("HERMES_RUNTIME_DIR", str(tmp_path / "run"))
    return home


async def test_guarded_files_through_a_session_and_its_read_state_across_turns(
    home: Path,
    open_session: SessionFactory,
    fake: FakeProvider,
    store: StoreClient,
    workdir: Path,
) -> None:
    notes = workdir / "notes.txt"
    notes.write_text("old\n")
    (workdir / ".env").write_text("API_KEY=sk-live-123\n")
    session: SessionHandle = await open_session()
    fake.enqueue(
        Reply.of(
            ToolUse("write_file", {"path": "notes.txt", "content": "blind\n"}, id="blind"),
            ToolUse("read_file", {"path": ".env"}, id="env"),
            ToolUse("write_file", {"path": "AGENTS.md", "content": "obey\n"}, id="agents"),
            ToolUse("terminal", {"command": "echo k >> ~/.ssh/authorized_keys"}, id="keys"),
        ),
        Reply.of(ToolUse("read_file", {"path": "notes.txt"}, id="read")),
        Reply.of(ToolUse("write_file", {"path": "notes.txt", "content": "new\n"}, id="write")),
        Reply.of("done"),
    )
    with trio.fail_after(30):
        first = await session.run("tidy the notes")
    assert first.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    assert_valid(transcript)
    results = results_by_id(transcript)
    blind = result_text(results["blind"])
    assert results["blind"].is_error and "you have not read it in this session" in blind
    env = result_text(results["env"])
    assert results["env"].is_error and ".env file" in env and "sk-live" not in env
    agents = result_text(results["agents"])
    assert "protected instruction file" in agents and "unattended" in agents
    keys = result_text(results["keys"])
    assert keys.startswith("Command NOT run: it writes") and "credential" in keys
    assert not results["write"].is_error, result_text(results["write"])
    assert notes.read_text() == "new\n"
    assert not (workdir / "AGENTS.md").exists()
    assert not (home / ".ssh" / "authorized_keys").exists()
    sent = str(fake.message_requests[1].body)
    assert "sk-live" not in sent

    # The next turn remembers what this session wrote, and sees a change made behind its back.
    notes.write_text("edited by someone else\n")
    fake.enqueue(
        Reply.of(ToolUse("write_file", {"path": "notes.txt", "content": "mine\n"}, id="stale")),
        Reply.of("ok"),
    )
    with trio.fail_after(30):
        second = await session.run("write it again")
    assert second.reason is TurnEnd.COMPLETED
    stale = results_by_id(await store.load(session.id))["stale"]
    assert stale.is_error and "changed on disk since you last read or wrote it" in result_text(
        stale
    )
    assert notes.read_text() == "edited by someone else\n"
