"""Stop and steer fan-out, verbs by id, busy-mode demotion, cleanup (items 5, 7, 8)."""

from __future__ import annotations

import json

import pytest
import trio

from hermes.fake import Endless, FakeProvider, Hang, MessagesRequest, Reply, ToolUse
from hermes.session import SessionHandle
from hermes.store import StoreClient
from hermes.subagents import SubagentFinished, SubagentInfo, UnknownSubagent
from hermes.subagents.ledger import Activity
from hermes.subagents.supervisor import SubagentSupervisor

from .conftest import Parent, child_of, is_parent, pids_named, script_parent
from .test_delegate import parent_result_text


def background_then_stream(req: MessagesRequest) -> Reply | Endless:
    if req.tool_results():
        return Endless(event_delay=0.01)
    return Reply.of(ToolUse("terminal", {"command": "sleep 33", "background": True}))


async def wait_listed(
    parent: SessionHandle, ok: object, timeout: float = 5.0
) -> list[SubagentInfo]:
    with trio.fail_after(timeout):
        while True:
            listed: list[SubagentInfo] = await parent.list_subagents()
            if ok(listed):  # type: ignore[operator]
                return listed
            await trio.sleep(0.02)


async def test_a_hard_cancel_of_the_parent_kills_every_child_and_its_processes_at_once(
    fake: FakeProvider, open_parent: Parent, store: StoreClient
) -> None:
    fake.when(background_then_stream, predicate=child_of("stream with a process"))
    script_parent(fake, {"tasks": [{"goal": f"stream with a process {i}"} for i in range(3)]})
    parent, runtime = await open_parent()
    await parent.prompt("go")
    await wait_listed(
        parent, lambda ls: len(ls) == 3 and all(i.activity == "model request (step 2)" for i in ls)
    )
    assert len(pids_named("sleep")) == 3
    with trio.fail_after(5):
        start = trio.current_time()
        cancelled = await parent.cancel()
        elapsed = trio.current_time() - start
    assert cancelled.result is not None and cancelled.result.reason.value == "cancelled"
    assert pids_named("sleep") == []  # reaped before cancel returned
    assert elapsed < 2.0
    listed = await parent.list_subagents()
    assert [i.state for i in listed] == ["interrupted"] * 3
    assert runtime.gate.running == 0 and runtime.running_ids == ()
    children = await store.list_sessions(parent_id=parent.id)
    assert len(children) == 3 and all(c.ended_at is not None for c in children)


async def test_a_cancel_with_no_children_skips_the_supervisor_round_trip(
    fake: FakeProvider, open_parent: Parent, monkeypatch: pytest.MonkeyPatch
) -> None:
    handled: list[str] = []
    receive = SubagentSupervisor.receive

    async def spy(self: SubagentSupervisor, message: object) -> object:
        handled.append(type(message).__name__)
        return await receive(self, message)

    monkeypatch.setattr(SubagentSupervisor, "receive", spy)
    fake.when(Endless(event_delay=0.01), predicate=is_parent, times=1)
    parent, _ = await open_parent()
    with parent.subscribe() as sub:
        await parent.prompt("stream forever")
        with trio.fail_after(5):
            async for event in sub.receive:
                if type(event.payload).__name__ == "TextDelta":
                    break
    cancelled = await parent.cancel()
    assert cancelled.result is not None and cancelled.result.reason.value == "cancelled"
    assert "Cancel" not in handled  # idle: nothing to stop, no call
    # With a batch running the supervisor is not idle, and the cancel goes to it.
    script_parent(fake, {"tasks": [{"goal": "stream with a process 1"}]})
    fake.when(background_then_stream, predicate=child_of("stream with a process"))
    await parent.prompt("go")
    await wait_listed(parent, lambda ls: len(ls) == 1 and ls[0].state == "running")
    await parent.cancel()
    assert "Cancel" in handled


def test_the_published_activity_is_idle_only_while_no_delegation_is_queued_or_running() -> None:
    activity = Activity()
    assert activity.idle()
    activity.batches = 1  # counted before the supervisor's first await on a Delegate
    assert not activity.idle()
    activity.batches = 0
    assert activity.idle()


async def test_a_soft_interrupt_is_forwarded_and_a_task_admitted_after_it_never_starts(
    fake: FakeProvider, open_parent: Parent, store: StoreClient
) -> None:
    fake.when(
        Reply.of(ToolUse("terminal", {"command": "sleep 32"})), predicate=child_of("first sleeper")
    )
    fake.when(Reply.of("should never run"), predicate=child_of("second sleeper"))
    script_parent(fake, {"tasks": [{"goal": "first sleeper"}, {"goal": "second sleeper"}]})
    parent, _ = await open_parent(max_concurrent_children=1)
    seen = []
    with parent.subscribe() as sub:
        await parent.prompt("go")
        await wait_listed(parent, lambda ls: ls and ls[0].current_tool == "terminal")
        await parent.interrupt("stop, please")
        with trio.fail_after(5):
            async for event in sub.receive:
                seen.append(event.payload)
                if event.type == "TurnCompleted":
                    break
    finished = [p for p in seen if isinstance(p, SubagentFinished)]
    assert [f.status for f in finished] == ["interrupted", "interrupted"]
    assert not [r for r in fake.message_requests if child_of("second sleeper")(r)]
    listed = await parent.list_subagents()
    first_child = await store.load(listed[0].session_id)
    assert "[Command interrupted]" in json.dumps([str(m) for m in first_child.messages])
    assert pids_named("sleep") == []
    transcript = await store.load(parent.id)  # interrupted: no later request carries it
    text = json.dumps([m.text() for m in transcript.messages]) + json.dumps(
        [str(b) for m in transcript.messages for b in m.content]
    )
    assert "not started: stop, please" in text


async def test_one_child_is_listed_steered_and_stopped_by_id_only_by_its_owner_or_an_operator(
    fake: FakeProvider, open_parent: Parent
) -> None:
    def steerable(req: MessagesRequest) -> Reply:
        if req.tool_results():
            steered = "turn left" in json.dumps(req.body["messages"][-1])
            return Reply.of(f"steered: {steered}")
        return Reply.of(ToolUse("terminal", {"command": "sleep 0.4"}))

    fake.when(steerable, predicate=child_of("steerable"))
    fake.when(Hang(), predicate=child_of("owner stops"))
    fake.when(Hang(), predicate=child_of("operator stops"))
    script_parent(
        fake,
        {
            "tasks": [
                {"goal": "a steerable task"},
                {"goal": "owner stops this"},
                {"goal": "operator stops this"},
            ]
        },
    )
    parent, runtime = await open_parent()
    other, _ = await open_parent(runtime=runtime)
    await parent.prompt("go")
    listed = await wait_listed(
        parent,
        lambda ls: (
            len(ls) == 3 and ls[0].current_tool == "terminal" and all(i.iteration == 1 for i in ls)
        ),
    )
    steer_id, owner_id, operator_id = (i.subagent_id for i in listed)
    assert all(i.state == "running" and i.session_id for i in listed)

    accepted = await parent.steer_subagent(steer_id, "turn left")
    assert accepted.how == "steered"
    with pytest.raises(UnknownSubagent):
        await other.stop_subagent(owner_id)  # not its subagent
    with pytest.raises(UnknownSubagent):
        await other.steer_subagent(steer_id, "hijack")
    stopped = await parent.stop_subagent(owner_id, "not needed any more")
    assert stopped.status.value == "interrupted" and stopped.detail == "not needed any more"
    by_operator = await runtime.stop_subagent(operator_id)
    assert by_operator.status.value == "interrupted"
    with trio.fail_after(5):
        while (await parent.state()).busy:  # noqa: ASYNC110 - polling the session
            await trio.sleep(0.02)
    text = parent_result_text(fake)
    assert "steered: True" in text
    assert "2 interrupted" in text or text.count("interrupted") >= 2


async def test_a_new_prompt_while_delegating_inline_is_queued_not_an_interrupt(
    fake: FakeProvider, open_parent: Parent
) -> None:
    fake.when(Hang(), predicate=child_of("hold the parent"))
    script_parent(fake, {"goal": "hold the parent busy"})
    parent, _ = await open_parent()
    await parent.prompt("go")
    listed = await wait_listed(parent, lambda ls: ls and ls[0].state == "running")
    accepted = await parent.prompt("and another thing")  # busy mode interrupt
    assert accepted.how == "queued"
    assert (await parent.list_subagents())[0].state == "running"  # not cut off
    await parent.stop_subagent(listed[0].subagent_id)
    with trio.fail_after(5):
        while (await parent.state()).busy or (await parent.state()).queued:  # noqa: ASYNC110
            await trio.sleep(0.02)
    assert (await parent.state()).turn == 2


async def test_processes_a_child_started_die_when_it_finishes(
    fake: FakeProvider, open_parent: Parent
) -> None:
    def child(req: MessagesRequest) -> Reply:
        if req.tool_results():
            return Reply.of("started a server and finished")
        return Reply.of(ToolUse("terminal", {"command": "sleep 34", "background": True}))

    fake.when(child, predicate=child_of("start a server"))
    script_parent(fake, {"goal": "start a server and leave"})
    parent, _ = await open_parent()
    with trio.fail_after(10):
        await parent.run("go")
    assert "1 completed" in parent_result_text(fake)
    assert pids_named("sleep") == []
