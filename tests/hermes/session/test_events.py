"""The session's events: order, numbering, bounded subscribers, approvals."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio

from hermes.fake import Endless, FakeProvider, Reply, Text, ToolUse
from hermes.session import SessionHandle, TurnEnd, UnknownApproval
from hermes.session.events import SessionEvent
from hermes.store import StoreClient

from ..fake_model import STRICT, FakeSetup
from .control_helpers import next_event, results_by_id, text_deltas, turn_completed


@pytest.fixture
def fake_setup() -> FakeSetup:
    return STRICT


SessionFactory = Callable[..., Awaitable[SessionHandle]]


def squeeze(events: list[SessionEvent], *, drop: tuple[str, ...] = ("ToolOutput",)) -> list[str]:
    """Event types in order, runs of TextDelta collapsed, ``drop`` left out."""
    out: list[str] = []
    for event in events:
        if event.type in drop or (event.type == "TextDelta" and out and out[-1] == "TextDelta"):
            continue
        out.append(event.type)
    return out


async def test_a_turn_publishes_its_events_in_order(
    session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(
        Reply.of(
            Text(deltas=("Let me ", "look.")),
            ToolUse("terminal", {"command": "echo hi"}, id="toolu_ev"),
        ),
        Reply.of(Text(deltas=("All ", "done."))),
    )
    seen: list[SessionEvent] = []
    with trio.fail_after(5), session.subscribe() as sub:
        result = await session.run("look around")
        await next_event(sub, "TurnCompleted", seen=seen)

    assert result.reason is TurnEnd.COMPLETED
    assert squeeze(seen) == [
        "TurnStarted",
        "MessageStarted",
        "TextDelta",
        "MessageCompleted",
        "UsageUpdated",
        "ToolStarted",
        "ToolCompleted",
        "MessageStarted",
        "TextDelta",
        "MessageCompleted",
        "UsageUpdated",
        "TurnCompleted",
    ]
    seqs = [e.seq for e in seen]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # nothing lost
    assert {e.session for e in seen} == {session.id}
    assert {e.payload.turn for e in seen if hasattr(e.payload, "turn")} == {1}

    payloads = {e.type: e.payload for e in seen}  # the last of each type
    deltas = [e.payload.text for e in seen if e.type == "TextDelta"]
    assert deltas == ["Let me ", "look.", "All ", "done."]
    assert seen[0].payload.prompt == "look around"
    first_reply = next(e.payload for e in seen if e.type == "MessageCompleted")
    assert (first_reply.seq, first_reply.text, first_reply.tool_calls) == (1, "Let me look.", 1)
    assert first_reply.stop_reason == "tool_use"
    tool = payloads["ToolCompleted"]
    assert (tool.call_id, tool.name, tool.status, tool.is_error) == (
        "toolu_ev",
        "terminal",
        "ok",
        False,
    )
    assert payloads["ToolStarted"].call_id == "toolu_ev"
    iterations = [e.payload.iteration for e in seen if e.type == "MessageStarted"]
    assert iterations == [0, 1]
    usage = payloads["UsageUpdated"]
    assert usage.total.output_tokens > usage.usage.output_tokens > 0
    done = payloads["TurnCompleted"]
    assert (done.reason, done.text, done.iterations) == ("completed", "All done.", 1)


async def test_a_slow_subscriber_loses_events_without_blocking_the_session(
    session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(
        Reply.of(Text(deltas=tuple(f"d{i} " for i in range(30)))),
        Reply.of("second turn"),
    )
    with trio.fail_after(5), session.subscribe(2) as slow, session.subscribe() as fast:
        result = await session.run("many deltas")  # completes while `slow` reads nothing
        await next_event(fast, "TurnCompleted")
        lost = slow.lost
        buffered = slow.drain()  # what it held, then at once the notice of what it lost
        assert [e.type for e in buffered] == ["TurnStarted", "MessageStarted", "EventsLost"]

        await session.prompt("again")
        after = await slow.receive.receive()
        await turn_completed(fast, 2)

    notice = buffered[-1]
    assert result.reason is TurnEnd.COMPLETED
    assert fast.lost == 0
    assert lost > 30  # every delta, the completion, usage, TurnCompleted...
    assert notice.payload.count == lost
    assert notice.seq == buffered[-2].seq + lost  # the seq of the last event it lost
    assert after.type == "TurnStarted" and after.payload.turn == 2
    assert after.seq == notice.seq + 1


async def test_each_gap_gets_one_notice_with_its_own_count(
    session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(*(Reply.of(Text(deltas=tuple(f"d{i} " for i in range(10)))) for _ in range(3)))
    drains: list[list[SessionEvent]] = []
    lost: list[int] = []
    with trio.fail_after(5), session.subscribe(3) as sub, session.subscribe() as sync:
        for turn in (1, 2, 3):
            await session.prompt(f"turn {turn}")
            await turn_completed(sync, turn)
            lost.append(sub.lost)
            drains.append(sub.drain())

    gaps = [lost[0], lost[1] - lost[0], lost[2] - lost[1]]
    assert min(gaps) > 10  # every delta of a turn, and more
    for gap, drained in zip(gaps, drains, strict=True):
        kinds = [e.type for e in drained]
        assert kinds == ["TurnStarted", "MessageStarted", "TextDelta", "EventsLost"]
        assert drained[-1].payload.count == gap  # the turn's whole gap, in one notice


async def test_queued_prompts_are_announced(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    session = await open_session(busy_mode="queue")
    command = "while [ ! -e go ]; do sleep 0.005; done"
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": command})), Reply.of("a"), Reply.of("b"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("start")
        await next_event(sub, "ToolStarted")
        await session.prompt("later")
        queued = await next_event(sub, "InputQueued")
        (workdir / "go").touch()
        await turn_completed(sub, 2)
    assert (queued.payload.position, queued.payload.text) == (1, "later")


async def test_cancel_publishes_the_partial_message_and_the_end(
    session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(Endless(delta="x", event_delay=0.005))
    seen: list[SessionEvent] = []
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("go")
        await text_deltas(sub, 3)
        await session.cancel("user pressed stop")
        done = await next_event(sub, "TurnCompleted", seen=seen)
    partial = [e.payload for e in seen if e.type == "MessageCompleted"]
    assert len(partial) == 1 and partial[0].stop_reason == "cancelled"
    assert partial[0].text.startswith("xxx")
    assert (done.payload.reason, done.payload.detail) == ("cancelled", "user pressed stop")


async def test_approval_requests_are_answered_once(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    (workdir / "build").mkdir()
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "rm -r build"}, id="toolu_rm")),
        Reply.of("removed"),
    )
    with trio.fail_after(5), session.subscribe(approvals=True) as sub:
        await session.prompt("clean up")
        asked = (await next_event(sub, "ApprovalRequested")).payload
        assert (await session.state()).approvals_waiting == (asked.request_id,)
        await session.respond_approval(asked.request_id, "once")
        resolved = (await next_event(sub, "ApprovalResolved")).payload
        with pytest.raises(UnknownApproval):
            await session.respond_approval(asked.request_id, "once")
        done = await turn_completed(sub, 1)
    assert (asked.call_id, asked.command, asked.turn) == ("toolu_rm", "rm -r build", 1)
    assert (resolved.request_id, resolved.choice) == (asked.request_id, "once")
    assert done.reason == "completed"
    assert not (workdir / "build").exists()


async def test_interrupt_denies_a_waiting_approval(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    (workdir / "build").mkdir()
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": "rm -r build"}, id="toolu_rm")))
    with trio.fail_after(5), session.subscribe(approvals=True) as sub:
        await session.prompt("clean up")
        asked = (await next_event(sub, "ApprovalRequested")).payload
        await session.interrupt()
        resolved = (await next_event(sub, "ApprovalResolved")).payload
        done = await turn_completed(sub, 1)
        transcript = await store.load(session.id)
    assert (resolved.request_id, resolved.choice) == (asked.request_id, "deny")
    assert done.reason == "interrupted"
    assert (workdir / "build").is_dir()
    assert "toolu_rm" in results_by_id(transcript.messages)
