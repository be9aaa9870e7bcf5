"""Spellings that once ran unattended, through a real session, real bash and a real directory.

Issue 20 item 3: ``x=rm; $x -rf DIR``, ``$(echo rm) -rf DIR`` and
``rm${IFS}-rf${IFS}DIR`` deleted the directory in an unattended turn. The gate
now reads what runs: they are denied unattended, with yolo on too, and a
person who allows one for the session is asked again for the next.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionHandle, TurnEnd
from hermes.session.events import ApprovalRequested
from hermes.store import StoreClient

from .conftest import SessionFactory
from .helpers import assert_valid, result_text, results_by_id, types

SPELLINGS = ["x=rm; $x -rf build", "$(echo rm) -rf build", "rm${IFS}-rf${IFS}build"]


@pytest.fixture
def victim(workdir: Path) -> Path:
    directory = workdir / "build"
    (directory / "sub").mkdir(parents=True)
    (directory / "sub" / "file.o").write_text("object")
    return directory


async def _run_one(session: SessionHandle, fake: FakeProvider, command: str) -> list[str]:
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": command}, id="toolu_x")), Reply.of("ok"))
    with session.subscribe() as sub, trio.fail_after(60):
        result = await session.run("clean up")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    return types(events)


@pytest.mark.parametrize("command", SPELLINGS)
async def test_an_unattended_turn_does_not_run_an_indirect_delete(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, victim: Path, command: str
) -> None:
    events = await _run_one(session, fake, command)
    assert await trio.Path(victim / "sub" / "file.o").exists()
    transcript = await store.load(session.id)
    assert_valid(transcript)
    block = results_by_id(transcript)["toolu_x"]
    assert block.is_error
    text = result_text(block)
    assert text.startswith("Command NOT run: it needs approval (")
    assert "a command name that is not literal text" in text
    assert "no one is attached to approve it (unattended session)" in text
    assert "ApprovalRequested" not in events


async def test_yolo_does_not_run_what_the_gate_cannot_read(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, victim: Path
) -> None:
    session = await open_session(yolo=True)
    await _run_one(session, fake, "x=rm; $x -rf build")
    assert await trio.Path(victim / "sub" / "file.o").exists()
    transcript = await store.load(session.id)
    assert "unattended session" in result_text(results_by_id(transcript)["toolu_x"])


async def test_a_session_answer_for_one_indirect_command_does_not_cover_the_next(
    session: SessionHandle, fake: FakeProvider, workdir: Path
) -> None:
    for name in ("one", "two"):
        (workdir / name).mkdir()
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "x=rm; $x -r one"}, id="toolu_1")),
        Reply.of(ToolUse("terminal", {"command": "$(echo rm) -r two"}, id="toolu_2")),
        Reply.of("done"),
    )
    asked: list[ApprovalRequested] = []
    answers = ["session", "deny"]
    with session.subscribe(approvals=True) as sub, trio.fail_after(60):
        async with trio.open_nursery() as nursery:

            async def run() -> None:
                result = await session.run("clean")
                assert result.reason is TurnEnd.COMPLETED
                nursery.cancel_scope.cancel()

            nursery.start_soon(run)
            while True:
                event = await sub.receive.receive()
                if isinstance(event.payload, ApprovalRequested):
                    asked.append(event.payload)
                    await session.respond_approval(event.payload.request_id, answers.pop(0))
    assert [a.command for a in asked] == ["x=rm; $x -r one", "$(echo rm) -r two"]
    assert not (workdir / "one").exists()  # allowed by the person
    assert (workdir / "two").exists()  # asked again, and denied


async def test_a_background_shell_fed_later_through_the_process_tool_is_not_started(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, victim: Path
) -> None:
    """``bash`` in background mode reads whatever ``process submit`` sends: unreadable code."""
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "bash", "background": True}, id="toolu_sh")),
        Reply.of("ok"),
    )
    with trio.fail_after(60):
        result = await session.run("open a shell")
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    text = result_text(results_by_id(transcript)["toolu_sh"])
    assert text.startswith("Command NOT run: it needs approval (shell code that is not literal")
    assert await trio.Path(victim / "sub" / "file.o").exists()
