"""The emergency stop and delegation (issue 27, item 4; seed #218): running background
batches are stopped, new delegations refused, results held until the stop is cleared."""

from __future__ import annotations

from pathlib import Path

import attrs
import trio

from hermes.fake import FakeProvider, Hang, MessagesRequest, Reply, ToolUse
from hermes.session import SessionHandle
from hermes.store import StoreClient
from hermes.subagents import SubagentRuntime

from .conftest import FAST, Parent, child_of, is_parent

HELD_CHECKS = 10
"""Check intervals a held result must stay held for (absence over a window)."""


def parent_replies(req: MessagesRequest) -> Reply | None:
    if not is_parent(req):
        return None
    text = req.last_user_text()
    if "Background delegation" in text:
        return Reply.of("noted the stopped delegation")
    if req.tool_results():
        return Reply.of("carrying on")
    if text == "delegate again":
        return Reply.of(ToolUse("delegate_task", {"goal": "count the files"}))
    return Reply.of(ToolUse("delegate_task", {"goal": "audit the logs slowly"}))


async def until_state(parent: SessionHandle, turns: int, timeout: float = 10.0) -> None:
    with trio.fail_after(timeout):
        while True:
            state = await parent.state()
            if state.turn >= turns and not state.busy and not state.queued:
                return
            await trio.sleep(0.02)


async def refused(store: StoreClient, session_id: str) -> str:
    """The session's transcript after its last tool call: the delegate_task refusal."""
    messages = [str(m) for m in (await store.load(session_id)).messages]
    last_call = max(i for i, m in enumerate(messages) if "ToolUseBlock" in m)
    return "\n".join(messages[last_call + 1 :])


async def until_running(runtime: SubagentRuntime, timeout: float = 10.0) -> None:
    with trio.fail_after(timeout):
        while True:
            if runtime.running_ids:
                return
            await trio.sleep(0.02)


async def test_the_stop_ends_background_work_refuses_new_and_holds_the_result(
    fake: FakeProvider, open_parent: Parent, store: StoreClient, tmp_path: Path
) -> None:
    estop = tmp_path / "ESTOP"
    runtime = SubagentRuntime(FAST, estop)
    fake.when(Hang(), predicate=child_of("audit the logs"))
    fake.when(parent_replies)
    parent, _ = await open_parent(runtime=runtime)
    with parent.subscribe(approvals=True):  # attended: code runs it in the background
        with trio.fail_after(10):
            await parent.run("start the audit")
        await until_running(runtime)

        estop.write_text("set\n")  # what the scheduler writes before the runtime is told
        assert runtime.stopped and not runtime.paused  # the operator's own pause is untouched
        assert await runtime.emergency_stop() == 1
        assert runtime.running_ids == ()
        with trio.fail_after(10):
            while True:
                if [r.status for r in await store.list_delegations(parent.id)] == ["finished"]:
                    break
                await trio.sleep(0.02)

        with trio.fail_after(10):  # a person's turn still runs; its delegation is refused
            answer = await parent.run("delegate again")
        assert answer.text == "carrying on"
        refusal = await refused(store, parent.id)
        assert "emergency stop is on" in refusal and "hermes resume" in refusal, refusal
        await trio.sleep(FAST.check_interval * HELD_CHECKS)
        assert (await parent.state()).turn == 2  # the held result started no turn
        (row,) = await store.list_delegations(parent.id)
        assert row.status == "finished" and row.result is not None
        assert "1 interrupted" in row.result and "emergency stop" in row.result

        estop.unlink()
        await until_state(parent, 3)  # delivered within a check of the stop's end
        transcript = await store.load(parent.id)
        assert "stopped by the emergency stop" in transcript.messages[-2].text()
        assert transcript.messages[-1].text() == "noted the stopped delegation"
        assert [r.status for r in await store.list_delegations(parent.id)] == ["delivered"]
        assert runtime.running_ids == ()  # stopped work is not restarted by the resume


async def test_a_restart_under_the_stop_refuses_and_holds_until_cleared(
    fake: FakeProvider, open_parent: Parent, store: StoreClient, tmp_path: Path
) -> None:
    estop = tmp_path / "ESTOP"
    estop.write_text("")  # empty still counts, as the seed says
    info = await store.create_session(model="claude-test")
    await store.record_delegation_start("dg-left", info.id, "audit the logs")
    await store.record_delegation_finish("dg-left", "[Background delegation dg-left finished]")
    fake.when(parent_replies)
    runtime = SubagentRuntime(attrs.evolve(FAST), estop)  # a fresh daemon's runtime
    parent, _ = await open_parent(runtime=runtime, session_id=info.id)
    with trio.fail_after(10):
        await parent.run("delegate again")
    assert "emergency stop is on" in await refused(store, info.id)
    await trio.sleep(FAST.check_interval * HELD_CHECKS)
    assert (await parent.state()).turn == 1
    assert [r.status for r in await store.list_delegations(info.id)] == ["finished"]
    estop.unlink()
    await until_state(parent, 2)
    assert [r.status for r in await store.list_delegations(info.id)] == ["delivered"]
