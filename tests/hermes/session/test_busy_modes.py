"""What a prompt arriving mid-turn does: interrupt (a redirect), queue, steer, reject, rollback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import attrs
import pytest
import trio

from actors import ActorSystem
from hermes.fake import Endless, FakeProvider, Hang, Reply, ToolUse
from hermes.processes import ProcessConfig
from hermes.session import (
    QueueFull,
    SessionBusy,
    SessionConfig,
    SessionDeps,
    SessionHandle,
    TurnEnd,
    TurnResult,
    start_session,
)
from hermes.store import StoreClient
from hermes.tools import default_registry

from .control_helpers import (
    HoldTool,
    gated,
    next_event,
    process_alive,
    request_messages,
    strict_fake,
    text_deltas,
    texts,
    turn_completed,
    wait_for_file,
    wire_texts,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeProvider]:
    async with strict_fake() as provider:
        yield provider


SessionFactory = Callable[..., Awaitable[SessionHandle]]


def gated_tool(flag: str = "go", call_id: str = "toolu_gate") -> ToolUse:
    return ToolUse("terminal", {"command": gated(flag, "echo gate-open")}, id=call_id)


async def test_interrupt_is_the_default_and_redirects_the_running_turn(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    # Hermes (seeds #8, #13, #220): a plain message mid-turn redirects that turn.
    fake.enqueue(Endless(delta="old ", event_delay=0.005), Reply.of("the new answer"))
    with trio.fail_after(5), session.subscribe() as sub:
        first = trio.Event()
        results: list[TurnResult] = []

        async def run_first() -> None:
            results.append(await session.run("first question"))
            first.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_first)
            await text_deltas(sub, 2)
            accepted = await session.prompt("actually, this instead")
            done = await turn_completed(sub, 1)
            await first.wait()
        state = await session.state()

    assert (accepted.how, accepted.turn, accepted.queued) == ("redirected", 1, 0)
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "the new answer"
    assert results[0].text == "the new answer"  # the first caller gets the redirected answer
    assert state.turn == 1 and not state.busy  # no second turn
    messages = (await store.load(session.id)).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert texts(messages[1])[0].startswith("old old")
    assert "[redirected]" not in texts(messages[1])[0]  # kept unmarked (seed #154)
    assert texts(messages[2])[0].endswith("\n\nactually, this instead")
    assert texts(messages[3]) == ["the new answer"]
    assert len(fake.message_requests) == 2
    # The reissued request carries the cut reply and the correction.
    reissued = request_messages(fake.message_requests[1])
    assert [m["role"] for m in reissued] == ["user", "assistant", "user"]


async def test_queue_mode_runs_prompts_in_order_up_to_the_limit(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    session = await open_session(busy_mode="queue", queue_limit=2)
    fake.enqueue(
        Reply.of(gated_tool()),
        Reply.of("turn one done"),
        Reply.of("answer A"),
        Reply.of("answer B"),
    )
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("start")
        await next_event(sub, "ToolStarted")
        first = await session.prompt("prompt A")
        second = await session.prompt("prompt B")
        with pytest.raises(QueueFull, match="2 prompts"):
            await session.prompt("prompt C")
        state = await session.state()
        (workdir / "go").touch()
        done = [await turn_completed(sub) for _ in range(3)]

    assert (first.how, first.queued) == ("queued", 1)
    assert (second.how, second.queued) == ("queued", 2)
    assert state.busy and state.queued == 2
    assert [d.reason for d in done] == [TurnEnd.COMPLETED.value] * 3  # not interrupted
    assert [d.text for d in done] == ["turn one done", "answer A", "answer B"]
    asked = [wire_texts(request_messages(r)[-1]) for r in fake.message_requests[2:]]
    assert asked == [["prompt A"], ["prompt B"]]
    assert len(fake.message_requests) == 4  # prompt C never ran


async def test_steer_mode_delivers_the_prompt_into_the_running_turn(
    session: SessionHandle, fake: FakeProvider, workdir: Path
) -> None:
    fake.enqueue(Reply.of(gated_tool()), Reply.of("one turn only"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("start")
        await next_event(sub, "ToolStarted")
        accepted = await session.prompt("keep it brief", mode="steer")
        (workdir / "go").touch()
        delivered = await next_event(sub, "SteerDelivered")
        done = await turn_completed(sub, 1)

    assert (accepted.how, accepted.turn) == ("steered", 1)
    assert delivered.payload.text == "keep it brief"
    assert done.reason == TurnEnd.COMPLETED.value
    last = request_messages(fake.message_requests[1])[-1]
    assert wire_texts(last) == ["[Steer from the user, delivered mid-turn: keep it brief]"]
    assert (await session.state()).turn == 1


async def test_reject_mode_refuses_and_leaves_the_turn_alone(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    session = await open_session(busy_mode="reject")
    fake.enqueue(Reply.of(gated_tool()), Reply.of("undisturbed"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("start")
        await next_event(sub, "ToolStarted")
        with pytest.raises(SessionBusy, match="busy mode reject"):
            await session.prompt("me too")
        state = await session.state()
        (workdir / "go").touch()
        done = await turn_completed(sub, 1)
    assert state.busy and state.queued == 0
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "undisturbed"
    assert len(fake.message_requests) == 2
    assert all("me too" not in str(r.body) for r in fake.message_requests)


async def test_rollback_mode_drops_the_turn_and_runs_the_new_prompt(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    fake.enqueue(Reply.of("first answer"))
    with trio.fail_after(5):
        await session.run("first question")
    before = (await store.load(session.id)).messages
    fake.enqueue(
        Reply.of(
            "Working on it.",
            ToolUse("terminal", {"command": "echo $$ > pid; sleep 30"}, id="toolu_rb"),
        ),
        Reply.of("the replacement answer"),
    )
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("a question to regret")
        leader = int(await wait_for_file(workdir / "pid"))
        accepted = await session.prompt("forget that; this one", mode="rollback")
        rolled = await turn_completed(sub, 2)
        done = await turn_completed(sub, 3)

    assert (accepted.how, accepted.turn) == ("rolled_back", 3)
    assert rolled.reason == TurnEnd.ROLLED_BACK.value
    assert done.reason == TurnEnd.COMPLETED.value
    assert not process_alive(leader)
    transcript = await store.load(session.id)
    messages = transcript.messages
    assert messages[: len(before)] == before  # the earlier history is untouched
    assert [m.role for m in messages[len(before) :]] == ["user", "assistant"]
    assert texts(messages[len(before)]) == ["forget that; this one"]
    assert texts(messages[-1]) == ["the replacement answer"]
    assert transcript.open_tool_uses == ()
    assert "a question to regret" not in str(messages)
    # The model saw no trace of the rolled-back turn either.
    resent = request_messages(fake.message_requests[-1])
    assert "regret" not in str(resent) and len(resent) == 3


async def test_interrupt_is_demoted_to_queue_while_the_turn_holds(
    system: ActorSystem,
    config: SessionConfig,
    store: StoreClient,
    deps: SessionDeps,
    fake: FakeProvider,
) -> None:
    hold = HoldTool()
    registry = default_registry()
    registry.register(hold)
    session = await start_session(
        system, config, attrs.evolve(deps, registry=registry), name="held-session"
    )
    fake.enqueue(
        Reply.of(ToolUse("hold", {}, id="toolu_hold")),
        Reply.of("held work finished"),
        Reply.of("second prompt answered"),
    )
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("delegate something")
        await hold.entered.wait()
        accepted = await session.prompt("next thing")  # busy mode: interrupt (the default)
        state = await session.state()
        hold.release.set()
        first = await turn_completed(sub, 1)
        second = await turn_completed(sub, 2)

    assert config.busy_mode.value == "interrupt"
    assert (accepted.how, accepted.queued) == ("queued", 1)
    assert state.busy and state.queued == 1
    assert hold.interrupted_inside is False
    assert first.reason == TurnEnd.COMPLETED.value and first.text == "held work finished"
    assert second.reason == TurnEnd.COMPLETED.value
    assert wire_texts(request_messages(fake.message_requests[2])[-1]) == ["next thing"]
    results = request_messages(fake.message_requests[1])[-1]["content"]
    assert results[0]["content"] == "held and released"


async def test_interrupt_mode_during_tools_delivers_the_message_after_their_results(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    fake.enqueue(Reply.of(gated_tool()), Reply.of("moved on"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("start")
        await next_event(sub, "ToolStarted")
        accepted = await session.prompt("stop that, do this")
        done = await turn_completed(sub, 1)
        state = await session.state()
        # the moved command ends only now: its completion notice may start a turn of its own
        (workdir / "go").touch()
    assert (accepted.how, accepted.turn) == ("steered", 1)  # no request in flight: its next seam
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "moved on"
    assert state.turn == 1
    last = request_messages(fake.message_requests[1])[-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]
    # the running command moved to the background (processes.background_on_redirect)
    assert "moved to the background as proc_" in str(last["content"][0]["content"])
    assert "stop that, do this" in wire_texts(last)[0]
    messages = (await store.load(session.id)).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]


async def test_interrupt_mode_queues_a_message_the_turns_corrections_have_no_room_for(
    open_session: SessionFactory,
    deps: SessionDeps,
    fake: FakeProvider,
    store: StoreClient,
    workdir: Path,
) -> None:
    """Nothing typed is lost: past ``steer_capacity`` waiting corrections, a plain message
    in busy mode ``interrupt`` waits in the prompt queue and runs as the next turn."""
    waits = attrs.evolve(deps, processes=ProcessConfig(background_on_redirect=False))
    session = await open_session(steer_capacity=1, with_deps=waits)
    fake.enqueue(Reply.of(gated_tool()), Reply.of("took the first"), Reply.of("ran the second"))
    with trio.fail_after(10), session.subscribe() as sub:
        await session.prompt("start")
        await next_event(sub, "ToolStarted")
        first = await session.prompt("first correction")
        second = await session.prompt("second message")
        with pytest.raises(QueueFull):  # an explicit steer still says so
            await session.steer("a steer with no room")
        (workdir / "go").touch()
        done = await turn_completed(sub, 1)
        after = await turn_completed(sub, 2)
    assert first.how == "steered" and (second.how, second.queued) == ("queued", 1)
    assert done.text == "took the first" and after.text == "ran the second"
    messages = (await store.load(session.id)).messages
    assert texts(messages[-2]) == ["second message"]
    assert "first correction" in wire_texts(request_messages(fake.message_requests[1])[-1])[0]


async def test_rollback_restores_a_prompt_merged_into_the_last_message(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Hang(), Reply.of(ToolUse("terminal", {"command": gated("never")})), Reply.of("ok"))
    with trio.fail_after(5), session.subscribe() as sub:
        await session.prompt("first")
        await fake.wait_for_requests(1)
        await session.cancel()  # nothing streamed: the transcript ends with the user's
        before = (await store.load(session.id)).messages
        await session.prompt("second, merged")
        await next_event(sub, "ToolStarted")
        accepted = await session.prompt("third", mode="rollback")
        await turn_completed(sub, accepted.turn)
    messages = (await store.load(session.id)).messages
    assert [m.role for m in before] == ["user"]
    assert [m.role for m in messages] == ["user", "assistant"]
    assert texts(messages[0]) == ["first", "third"]
    assert "merged" not in str(messages)
