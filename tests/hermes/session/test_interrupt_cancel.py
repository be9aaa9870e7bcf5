"""Soft interrupt, hard cancel, killing one tool worker, and refused input."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from actors import ActorSystem
from hermes.fake import Endless, FakeProvider, Reply, Text, ToolUse
from hermes.session import (
    InvalidInput,
    NoTurnRunning,
    SessionClosed,
    SessionError,
    SessionHandle,
    TurnEnd,
    UnknownApproval,
)
from hermes.store import StoreClient

from .control_helpers import (
    gated,
    live_group,
    next_event,
    process_alive,
    results_by_id,
    strict_fake,
    text_deltas,
    texts,
    turn_completed,
    wait_for_file,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeProvider]:
    async with strict_fake() as provider:
        yield provider


SLOW_TEXT = Text(deltas=tuple(f"word{i} " for i in range(200)))


# -- soft interrupt ----------------------------------------------------------------------


async def test_interrupt_during_stream_keeps_the_partial_text(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Reply.of(SLOW_TEXT, event_delay=0.01))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("write a long answer")
        streamed = await text_deltas(sub, 3)
        accepted = await session.interrupt("enough")
        done = await turn_completed(sub, 1)
        state = await session.state()

    assert accepted.how == "interrupting" and accepted.turn == 1
    assert done.reason == TurnEnd.INTERRUPTED.value
    assert done.detail == "enough"
    assert done.text.startswith("".join(streamed).strip())  # stripped, as Hermes
    assert not state.busy
    messages = (await store.load(session.id)).messages
    assert [m.role for m in messages] == ["user", "assistant"]
    kept = texts(messages[1])[0]
    assert kept.startswith("word0 word1 word2")
    assert kept == done.text  # kept as streamed, unmarked (Hermes, seed #154)
    assert "word199" not in kept  # the stream really stopped early
    assert len(fake.message_requests) == 1
    with trio.fail_after(1):
        await fake.message_requests[0].wait_disconnect()


async def test_interrupt_during_tools_stops_the_command_and_skips_the_rest(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of(
            "Running two commands.",
            ToolUse("terminal", {"command": "echo started; sleep 30"}, id="toolu_sleep"),
            ToolUse("terminal", {"command": "touch never-made"}, id="toolu_after"),
        )
    )
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("run them")
        await next_event(sub, "ToolOutput", lambda p: "started" in p.text)
        await session.interrupt()
        completed = await next_event(sub, "ToolCompleted")
        done = await turn_completed(sub, 1)

    assert done.reason == TurnEnd.INTERRUPTED.value
    assert completed.payload.call_id == "toolu_sleep"
    transcript = await store.load(session.id)
    assert transcript.open_tool_uses == ()
    found = results_by_id(transcript.messages)
    assert len(found["toolu_sleep"]) == 1 and len(found["toolu_after"]) == 1
    assert "[Command interrupted]" in found["toolu_sleep"][0]
    assert "[exit code: 130]" in found["toolu_sleep"][0]
    assert "skipped" in found["toolu_after"][0]
    assert not (workdir / "never-made").exists()
    assert len(fake.message_requests) == 1  # no model call after the interrupt


# -- hard cancel -------------------------------------------------------------------------


async def test_cancel_closes_the_model_stream_at_once(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Endless(delta="tick ", event_delay=0.005))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("stream forever")
        await text_deltas(sub, 3)
        asked = time.monotonic()
        cancelled = await session.cancel("stop now")
        state = await session.state()
        transcript = await store.load(session.id)  # persisted by the time cancel answered
        with trio.fail_after(1):
            seen = await fake.message_requests[-1].wait_disconnect()

    assert cancelled.result is not None
    assert cancelled.result.reason is TurnEnd.CANCELLED
    assert cancelled.result.detail == "stop now"
    assert cancelled.dropped == ()
    assert not state.busy and state.turn_path is None
    assert state.messages == len(transcript.messages) == 2
    assert texts(transcript.messages[1])[0].startswith("tick tick tick ")
    assert texts(transcript.messages[1])[0].endswith("[cancelled]")
    assert seen - asked < 0.5


async def test_cancel_kills_running_tools_and_their_process_group(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    pids_file = workdir / "pids"
    fake.enqueue(
        Reply.of(
            ToolUse(
                "terminal",
                {"command": f"sleep 30 & echo $$ $! > {pids_file}; wait"},
                id="toolu_sleepy",
            ),
            ToolUse("read_file", {"path": "nothing.txt"}, id="toolu_read"),
            ToolUse("terminal", {"command": "touch never-made"}, id="toolu_touch"),
        )
    )
    with trio.fail_after(8):
        await session.prompt("go")
        leader, sleeper = (int(p) for p in (await wait_for_file(pids_file)).split())
        assert process_alive(leader) and process_alive(sleeper)
        queued = await session.prompt("next, please", mode="queue")
        cancelled = await session.cancel()
        state = await session.state()
        transcript = await store.load(session.id)

    assert queued.how == "queued"
    assert cancelled.result is not None and cancelled.result.reason is TurnEnd.CANCELLED
    assert cancelled.dropped == ("next, please",)
    assert not state.busy and state.queued == 0
    # The whole group is gone, the backgrounded grandchild included.
    assert not process_alive(leader) and not process_alive(sleeper)
    assert live_group(leader) == []
    # Exactly one result per requested call; the transcript is valid as stored.
    assert transcript.open_tool_uses == ()
    found = results_by_id(transcript.messages)
    assert {k: len(v) for k, v in found.items()} == {
        "toolu_sleepy": 1,
        "toolu_read": 1,
        "toolu_touch": 1,
    }
    assert "cancelled" in found["toolu_sleepy"][0]
    assert "skipped" in found["toolu_read"][0]
    assert "skipped" in found["toolu_touch"][0]
    assert not (workdir / "never-made").exists()
    assert state.messages == len(transcript.messages)
    assert len(fake.message_requests) == 1  # the dropped prompt never ran


async def test_cancel_while_idle_returns_nothing(session: SessionHandle) -> None:
    with trio.fail_after(5):
        cancelled = await session.cancel()
    assert cancelled.result is None and cancelled.dropped == ()


async def test_session_runs_the_next_prompt_after_a_cancel(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Endless(event_delay=0.005), Reply.of("fresh answer"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("first")
        await text_deltas(sub, 1)
        await session.cancel()
        result = await session.run("second")
    assert result.reason is TurnEnd.COMPLETED and result.text == "fresh answer"
    transcript = await store.load(session.id)
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]


# -- one tool worker killed by path ------------------------------------------------------


async def test_killing_one_tool_worker_stops_that_call_only(
    session: SessionHandle,
    fake: FakeProvider,
    store: StoreClient,
    system: ActorSystem,
    workdir: Path,
) -> None:
    fake.enqueue(
        Reply.of(
            ToolUse("terminal", {"command": "echo $$ > pid; sleep 30"}, id="toolu_stuck"),
            ToolUse("terminal", {"command": "echo second-ran"}, id="toolu_next"),
        ),
        Reply.of("carried on"),
    )
    with trio.fail_after(8), session.subscribe() as sub:
        await session.prompt("go")
        await next_event(sub, "ToolStarted", lambda p: p.call_id == "toolu_stuck")
        leader = int(await wait_for_file(workdir / "pid"))
        state = await session.state()
        assert state.turn_path is not None
        worker = system.lookup(f"{state.turn_path}/tool-toolu_stuck")
        assert worker is not None and worker.is_alive
        await worker.kill()
        done = await turn_completed(sub, 1)

    assert done.reason == TurnEnd.COMPLETED.value and done.text == "carried on"
    assert not process_alive(leader)
    found = results_by_id((await store.load(session.id)).messages)
    assert "stopped" in found["toolu_stuck"][0]
    assert "second-ran" in found["toolu_next"][0]
    assert len(fake.message_requests) == 2
    second = fake.message_requests[1].body["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in second] == ["toolu_stuck", "toolu_next"]
    assert second[0]["is_error"] is True


# -- refused input -----------------------------------------------------------------------


async def test_empty_input_is_refused(session: SessionHandle, fake: FakeProvider) -> None:
    with trio.fail_after(5):
        for text in ("", "   \n\t"):
            with pytest.raises(InvalidInput, match="empty"):
                await session.prompt(text)
            with pytest.raises(InvalidInput, match="empty"):
                await session.steer(text)
        state = await session.state()
    assert state.turn == 0 and not state.busy and state.messages == 0
    assert fake.message_requests == []


async def test_verbs_that_need_a_turn_refuse_when_idle(session: SessionHandle) -> None:
    with trio.fail_after(5):
        with pytest.raises(NoTurnRunning):
            await session.interrupt()
        with pytest.raises(NoTurnRunning):
            await session.redirect("do it differently")
        with pytest.raises(UnknownApproval, match="no approval request 42"):
            await session.respond_approval(42, "once")
        assert not (await session.state()).busy


async def test_a_closed_session_refuses_prompts(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Reply.of("hello"))
    with trio.fail_after(5):
        await session.run("hi")
        closed = await session.close("done for today")
        with pytest.raises(SessionClosed):
            await session.prompt("anyone there?")
        with pytest.raises(SessionClosed):
            await session.steer("anyone?")
        info = await store.get_session(session.id)
    assert closed.result is None
    assert info.ended
    assert len(fake.message_requests) == 1


async def test_close_mid_turn_cancels_it(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": gated("never")}, id="toolu_wait")))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("wait")
        await next_event(sub, "ToolStarted")
        closed = await session.close()
        transcript = await store.load(session.id)
    assert closed.result is not None and closed.result.reason is TurnEnd.CANCELLED
    assert transcript.open_tool_uses == ()
    assert transcript.session.ended


async def test_cancel_keeps_the_results_that_already_landed(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of(
            ToolUse("terminal", {"command": "echo first-done"}, id="toolu_a"),
            ToolUse("terminal", {"command": gated("never")}, id="toolu_b"),
            ToolUse("terminal", {"command": "touch never-made"}, id="toolu_c"),
        )
    )
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("three commands")
        await next_event(sub, "ToolStarted", lambda p: p.call_id == "toolu_b")
        await session.cancel()
        transcript = await store.load(session.id)
    found = results_by_id(transcript.messages)
    assert {k: len(v) for k, v in found.items()} == {"toolu_a": 1, "toolu_b": 1, "toolu_c": 1}
    assert "first-done" in found["toolu_a"][0] and "[exit code: 0]" in found["toolu_a"][0]
    assert found["toolu_b"][0].startswith("[Tool call cancelled")
    assert found["toolu_c"][0].startswith("[Tool call skipped")
    assert transcript.open_tool_uses == ()
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user"]


async def test_cancel_drops_queued_prompts_and_pending_steers(
    session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(Endless(event_delay=0.005))
    outcome: list[BaseException] = []

    async def wait_for_queued_run() -> None:
        try:
            await session.run("queued and waiting", mode="queue")
        except SessionError as exc:
            outcome.append(exc)

    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("go")
        await text_deltas(sub, 1)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(wait_for_queued_run)
            await next_event(sub, "InputQueued")
            await session.steer("a late steer")
            cancelled = await session.cancel()
    assert set(cancelled.dropped) == {"queued and waiting", "a late steer"}
    assert len(outcome) == 1 and "dropped" in str(outcome[0])
    assert (await session.state()).queued == 0
    assert len(fake.message_requests) == 1


async def test_cancel_sigkills_a_group_that_ignores_sigterm(
    session: SessionHandle,
    fake: FakeProvider,
    store: StoreClient,
    workdir: Path,
    system: ActorSystem,
) -> None:
    pids_file = workdir / "pids"
    command = f"trap '' TERM; sleep 30 & echo $$ $! > {pids_file}; wait"
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": command}, id="toolu_stubborn")))
    with trio.fail_after(6):
        await session.prompt("go")
        leader, sleeper = (int(p) for p in (await wait_for_file(pids_file)).split())
        cancelled = await session.cancel()
    assert cancelled.result is not None and cancelled.result.reason is TurnEnd.CANCELLED
    assert not process_alive(leader) and not process_alive(sleeper)  # gone when cancel returns
    assert live_group(leader) == []
    assert system.unkillable() == []
    transcript = await store.load(session.id)
    assert transcript.open_tool_uses == ()
    assert "cancelled" in results_by_id(transcript.messages)["toolu_stubborn"][0]


async def test_killing_the_turn_by_path_leaves_the_session_usable(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, system: ActorSystem
) -> None:
    fake.enqueue(Endless(delta="tock ", event_delay=0.005), Reply.of("still here"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("go")
        await text_deltas(sub, 2)
        path = (await session.state()).turn_path
        assert path is not None and path.endswith("/turn-1")
        turn = system.lookup(path)
        assert turn is not None
        await turn.kill()
        done = await turn_completed(sub, 1)
        result = await session.run("are you there?")
        with trio.fail_after(1):
            await fake.message_requests[0].wait_disconnect()
    assert done.reason == TurnEnd.CANCELLED.value
    assert result.reason is TurnEnd.COMPLETED and result.text == "still here"
    messages = (await store.load(session.id)).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert texts(messages[1])[0].startswith("tock tock ")
    assert texts(messages[1])[0].endswith("[cancelled]")
