"""The path guard through a real session turn: the fake provider asks, real files answer."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionHandle, TurnEnd
from hermes.store import StoreClient

from .conftest import SessionFactory
from .helpers import completed_results, result_text, results_by_id


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
    results = await completed_results(session, store, "tidy the notes")
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


async def test_a_smart_judged_rm_after_ten_writes_is_rolled_back_through_checkpoints(
    home: Path,
    open_session: SessionFactory,
    fake: FakeProvider,
    store: StoreClient,
    workdir: Path,
    tmp_path: Path,
) -> None:
    from hermes.tools import CheckpointService

    (workdir / "build").mkdir()
    (workdir / "build" / "out.o").write_text("object\n")
    checkpoints = tmp_path / "data" / "checkpoints"
    session = await open_session(approval_mode="smart", checkpoint_dir=checkpoints)
    writes = [
        ToolUse("write_file", {"path": f"src/m{i}.py", "content": f"x = {i}\n"}, id=f"w{i}")
        for i in range(10)
    ]
    fake.enqueue(
        Reply.of(*writes),
        Reply.of(ToolUse("terminal", {"command": "rm -rf build"}, id="rm")),
        Reply.of(ToolUse("verdict", {"decision": "approve", "reason": "build output"})),
        Reply.of("done"),
    )
    with session.subscribe(approvals=True), trio.fail_after(60):
        result = await session.run("regenerate")
    assert result.reason is TurnEnd.COMPLETED
    rm = results_by_id(await store.load(session.id))["rm"]
    assert not rm.is_error, result_text(rm)
    assert not (workdir / "build").exists()
    judge = fake.message_requests[2].body
    assert judge["tool_choice"] == {"type": "any"} and "rm -rf build" in str(judge["messages"])

    service = CheckpointService(root=checkpoints)  # what /rollback 2 does
    listed = await service.list(workdir)
    assert listed[0].reason == "before terminal: rm -rf build"
    assert listed[1].reason.startswith("before write_file ")
    await service.restore(workdir, 2)
    assert (workdir / "build" / "out.o").read_text() == "object\n"
    assert not (workdir / "src").exists()
