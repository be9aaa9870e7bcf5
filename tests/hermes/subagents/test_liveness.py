"""Liveness: stale children are cancelled and reported stalled; the wall-clock cap (item 4)."""

from __future__ import annotations

import trio

from hermes.fake import Endless, FakeProvider, Hang, MessagesRequest, Reply, ToolUse
from hermes.subagents import SubagentFinished

from .conftest import Parent, child_of, pids_named, script_parent
from .test_delegate import parent_result_text


async def test_a_child_hanging_in_its_model_call_is_cancelled_as_stalled(
    fake: FakeProvider, open_parent: Parent
) -> None:
    fake.when(Hang(), predicate=child_of("hang in the model"))
    script_parent(fake, {"goal": "hang in the model call"})
    parent, runtime = await open_parent(stale_between_tools=0.3)
    with parent.subscribe() as sub, trio.fail_after(10):
        start = trio.current_time()
        await parent.run("go")
        elapsed = trio.current_time() - start
        events = sub.drain()
    finished = next(e.payload for e in events if isinstance(e.payload, SubagentFinished))
    assert finished.status == "stalled"
    assert "between tools" in finished.detail
    assert "last activity: model request (step 1)" in finished.detail
    assert 0.3 <= elapsed < 2.0
    hung = next(r for r in fake.message_requests if child_of("hang in the model")(r))
    await hung.wait_disconnect()  # the child's stream was closed, not left behind
    assert "1 stalled" in parent_result_text(fake)
    assert runtime.gate.running == 0


async def test_inside_a_tool_a_child_gets_the_longer_limit_then_is_stalled_and_reaped(
    fake: FakeProvider, open_parent: Parent
) -> None:
    fake.when(
        Reply.of(ToolUse("terminal", {"command": "sleep 31"})),
        predicate=child_of("sleep in a tool"),
    )
    script_parent(fake, {"goal": "sleep in a tool for long"})
    parent, _ = await open_parent(stale_between_tools=0.15, stale_in_tool=0.6)
    with parent.subscribe() as sub, trio.fail_after(10):
        start = trio.current_time()
        await parent.run("go")
        elapsed = trio.current_time() - start
        events = sub.drain()
    finished = next(e.payload for e in events if isinstance(e.payload, SubagentFinished))
    assert finished.status == "stalled"
    assert "inside terminal" in finished.detail and "running terminal" in finished.detail
    assert elapsed >= 0.6  # the 0.15 s limit between tools did not apply inside the tool
    assert pids_named("sleep") == []


async def test_a_busy_child_over_its_wall_clock_cap_is_timed_out(
    fake: FakeProvider, open_parent: Parent
) -> None:
    fake.when(Endless(event_delay=0.01), predicate=child_of("stream forever"))
    script_parent(fake, {"goal": "stream forever and ever"})
    parent, _ = await open_parent(child_timeout=0.4, stale_between_tools=0.2)
    with parent.subscribe() as sub, trio.fail_after(10):
        await parent.run("go")
        events = sub.drain()
    finished = next(e.payload for e in events if isinstance(e.payload, SubagentFinished))
    assert finished.status == "timed_out"  # streaming is progress: never stalled
    assert "wall-clock cap of 0.4s" in finished.detail
    assert 0.4 <= finished.duration < 1.5


async def test_a_child_making_progress_is_left_alone(
    fake: FakeProvider, open_parent: Parent
) -> None:
    def child(req: MessagesRequest) -> Reply:
        if len(req.body["messages"]) >= 7:
            return Reply.of("finished after three slow steps")
        return Reply.of(ToolUse("terminal", {"command": "sleep 0.15"}))

    fake.when(child, predicate=child_of("slow steps"))
    script_parent(fake, {"goal": "take slow steps"})
    parent, _ = await open_parent(stale_between_tools=0.1, stale_in_tool=0.4)
    with trio.fail_after(10):
        await parent.run("go")
    assert "1 completed" in parent_result_text(fake)
