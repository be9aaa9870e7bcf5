"""The terminal's approval gate through a real session and its subscribers."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionHandle, Subscriber, TurnEnd, TurnResult, UnknownApproval
from hermes.session.events import ApprovalRequested
from hermes.store import StoreClient
from hermes.tools.danger import classify, is_hardline

from .conftest import SessionFactory
from .helpers import assert_valid, payloads, result_text, results_by_id, types


async def _run_answering(
    session: SessionHandle, sub: Subscriber, text: str, answers: list[str]
) -> tuple[TurnResult, list[ApprovalRequested]]:
    """Run a turn while answering its approval requests with ``answers``, in order."""
    asked: list[ApprovalRequested] = []
    outcome: list[TurnResult] = []

    async def run() -> None:
        outcome.append(await session.run(text))
        nursery.cancel_scope.cancel()  # stop answering (a request that never came fails below)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        pending = list(answers)
        while pending:
            event = await sub.receive.receive()
            if isinstance(event.payload, ApprovalRequested):
                asked.append(event.payload)
                await session.respond_approval(event.payload.request_id, pending.pop(0))
    return outcome[0], asked


@pytest.fixture
def victim(workdir: Path) -> Path:
    directory = workdir / "build"
    (directory / "sub").mkdir(parents=True)
    (directory / "sub" / "file.o").write_text("object")
    return directory


RM = "rm -rf build"


async def test_unattended_dangerous_command_is_denied_and_nothing_runs(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, victim: Path
) -> None:
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": RM}, id="toolu_rm")), Reply.of("ok"))
    with session.subscribe() as sub, trio.fail_after(10):
        result = await session.run("clean")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert await trio.Path(victim / "sub" / "file.o").exists()
    transcript = await store.load(session.id)
    assert_valid(transcript)
    block = results_by_id(transcript)["toolu_rm"]
    assert block.is_error
    text = result_text(block)
    assert text.startswith("Command NOT run: it needs approval (recursive delete (rm -r))")
    assert "no one is attached to approve it (unattended session)" in text
    assert "Nothing was executed." in text
    assert "ApprovalRequested" not in types(events)


async def test_approved_once_runs_the_command(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, victim: Path
) -> None:
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": RM}, id="toolu_rm")), Reply.of("ok"))
    with session.subscribe(approvals=True) as sub, trio.fail_after(10):
        result, asked = await _run_answering(session, sub, "clean", ["once"])
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert not await trio.Path(victim).exists()
    assert len(asked) == 1
    request = asked[0]
    assert (request.command, request.call_id, request.turn) == (RM, "toolu_rm", 1)
    assert "recursive delete" in request.reasons
    resolved = payloads(events, "ApprovalResolved")
    assert [(r.request_id, r.choice) for r in resolved] == [(request.request_id, "once")]
    transcript = await store.load(session.id)
    block = results_by_id(transcript)["toolu_rm"]
    assert not block.is_error
    assert result_text(block) == "(no output)\n[exit code: 0]"
    assert (await session.state()).approvals_waiting == ()


async def test_approved_for_the_session_covers_later_commands_of_that_kind(
    session: SessionHandle, fake: FakeProvider, workdir: Path
) -> None:
    for name in ("one", "two"):
        (workdir / name).mkdir()
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "rm -r one"}, id="toolu_1")),
        Reply.of(ToolUse("terminal", {"command": "rm -rf two"}, id="toolu_2")),
        Reply.of("both gone"),
    )
    with session.subscribe(approvals=True) as sub, trio.fail_after(10):
        result, asked = await _run_answering(session, sub, "clean", ["session"])
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert len(asked) == 1 and asked[0].command == "rm -r one"
    assert "ApprovalRequested" not in types(events)  # the second was never asked
    assert not (workdir / "one").exists() and not (workdir / "two").exists()


async def test_denied_command_does_not_run(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, victim: Path
) -> None:
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": RM}, id="toolu_rm")), Reply.of("ok"))
    with session.subscribe(approvals=True) as sub, trio.fail_after(10):
        result, asked = await _run_answering(session, sub, "clean", ["deny"])
    assert result.reason is TurnEnd.COMPLETED
    assert len(asked) == 1
    assert (victim / "sub" / "file.o").exists()
    transcript = await store.load(session.id)
    text = result_text(results_by_id(transcript)["toolu_rm"])
    assert text.startswith("Command NOT run: the user denied approval (recursive delete")
    assert "Nothing was executed." in text


async def test_unanswered_approval_times_out_as_a_denial(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, victim: Path
) -> None:
    session = await open_session(approval_timeout=0.3)
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": RM}, id="toolu_rm")), Reply.of("ok"))
    with session.subscribe(approvals=True) as sub, trio.fail_after(10):
        started = trio.current_time()
        result = await session.run("clean")
        elapsed = trio.current_time() - started
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert 0.3 <= elapsed < 5
    assert (victim / "sub" / "file.o").exists()
    asked = payloads(events, "ApprovalRequested")
    assert len(asked) == 1 and asked[0].timeout == 0.3
    # The surfaces are told the request is over (a prompt on screen must close).
    resolved = payloads(events, "ApprovalResolved")
    assert [(r.request_id, r.choice) for r in resolved] == [(asked[0].request_id, "deny")]
    with pytest.raises(UnknownApproval):
        await session.respond_approval(asked[0].request_id, "once")
    transcript = await store.load(session.id)
    text = result_text(results_by_id(transcript)["toolu_rm"])
    assert "no answer came within 0.3 s (silence is not consent)" in text
    assert "Nothing was executed." in text
    assert (await session.state()).approvals_waiting == ()


async def test_yolo_runs_dangerous_commands_without_asking(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, victim: Path
) -> None:
    session = await open_session(yolo=True)
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": RM}, id="toolu_rm")), Reply.of("ok"))
    with session.subscribe(approvals=True) as sub, trio.fail_after(10):
        result = await session.run("clean")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert not await trio.Path(victim).exists()
    assert "ApprovalRequested" not in types(events)
    transcript = await store.load(session.id)
    assert result_text(results_by_id(transcript)["toolu_rm"]) == "(no output)\n[exit code: 0]"


async def test_hardline_is_refused_even_with_yolo_and_an_approver(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    # On the floor (any mkfs), and harmless if it did run: the marker would show it.
    command = "touch ran.marker && mkfs.ext4 ./disk.img"
    assert is_hardline(command)
    assert [f.key for f in classify(command)] == ["format_filesystem"]
    session = await open_session(yolo=True)
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": command}, id="toolu_x")), Reply.of("ok"))
    with session.subscribe(approvals=True) as sub, trio.fail_after(10):
        result = await session.run("format it")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED
    assert not (workdir / "ran.marker").exists()
    assert not (workdir / "disk.img").exists()
    assert "ApprovalRequested" not in types(events)
    transcript = await store.load(session.id)
    block = results_by_id(transcript)["toolu_x"]
    assert block.is_error
    text = result_text(block)
    assert text.startswith("BLOCKED: this command was NOT run.")
    assert "formatting a filesystem (mkfs)" in text
    assert "no approval and no yolo mode can override" in text


async def test_yolo_switched_on_and_off_mid_session(
    session: SessionHandle, fake: FakeProvider, victim: Path
) -> None:
    """The switch reaches the gate of the next command; turning it off applies the list again."""
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": RM}, id="toolu_on")), Reply.of("cleaned"))
    with session.subscribe() as sub, trio.fail_after(10):
        assert await session.set_yolo(True) is True
        first = await session.run("clean")  # unattended, yet it runs: yolo skips the list
        assert first.reason is TurnEnd.COMPLETED
        assert not await trio.Path(victim).exists()
        assert payloads(sub.drain(), "ApprovalRequested") == []

        await trio.Path(victim).mkdir()
        fake.enqueue(
            Reply.of(ToolUse("terminal", {"command": RM}, id="toolu_off")), Reply.of("kept")
        )
        assert await session.set_yolo(False) is False
        second = await session.run("clean again")
    assert second.reason is TurnEnd.COMPLETED
    assert await trio.Path(victim).exists()  # unattended and no yolo: denied, nothing ran
