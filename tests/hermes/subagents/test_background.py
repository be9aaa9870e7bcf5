"""Background delegation: an id at once, the result as a new turn, durable (item 7)."""

from __future__ import annotations

import trio

from hermes.fake import FakeProvider, MessagesRequest, Reply, ToolUse
from hermes.session import SessionHandle
from hermes.session import events as ev
from hermes.store import StoreClient
from hermes.subagents import DelegationCompleted

from .conftest import Parent, child_of, is_parent


async def wait_turns(parent: SessionHandle, turns: int, timeout: float = 5.0) -> None:
    with trio.fail_after(timeout):
        while True:
            state = await parent.state()
            if state.turn >= turns and not state.busy and not state.queued:
                return
            await trio.sleep(0.02)


def parent_replies(req: MessagesRequest) -> Reply | None:
    if not is_parent(req):
        return None
    if "Background delegation" in req.last_user_text():
        return Reply.of("noted the background result")
    if req.tool_results():
        return Reply.of("carrying on while it runs")
    if "lost" in req.last_user_text() or "RESULT ONE" in req.last_user_text():
        return Reply.of("noted")
    return Reply.of(ToolUse("delegate_task", {"goal": "audit the logs slowly"}))


async def test_background_returns_an_id_at_once_and_the_result_arrives_as_a_new_turn(
    fake: FakeProvider, open_parent: Parent, store: StoreClient
) -> None:
    fake.when(Reply.of("audit: 3 warnings", delay=0.3), predicate=child_of("audit the logs"))
    fake.when(parent_replies)
    parent, _ = await open_parent()
    with parent.subscribe(approvals=True) as sub:  # attended: code runs it in the background
        with trio.fail_after(5):
            first = await parent.run("start the audit")
        assert first.text == "carrying on while it runs"
        tool_result = str((await store.load(parent.id)).messages[2])
        assert "Started background delegation dg-" in tool_result
        await wait_turns(parent, 2)
        events = sub.drain()
    noticed = [e.payload for e in events if isinstance(e.payload, ev.InputNoticed)]
    assert len(noticed) == 1 and noticed[0].source == "subagents"
    assert "audit: 3 warnings" in noticed[0].text
    completed = [e.payload for e in events if isinstance(e.payload, DelegationCompleted)]
    assert completed[0].background and completed[0].statuses == ("completed",)
    transcript = await store.load(parent.id)
    assert "Background delegation" in transcript.messages[4].text()
    assert transcript.messages[5].text() == "noted the background result"
    rows = await store.list_delegations(parent.id)
    assert [r.status for r in rows] == ["delivered"]
    assert rows[0].id == noticed[0].key


async def test_results_a_previous_daemon_left_are_delivered_and_running_ones_reported_lost(
    fake: FakeProvider, open_parent: Parent, store: StoreClient
) -> None:
    info = await store.create_session(model="claude-test")
    await store.record_delegation_start("dg-finished", info.id, "summarise the changelog")
    await store.record_delegation_finish("dg-finished", "[RESULT ONE: the changelog has 3 entries]")
    await store.record_delegation_start("dg-running", info.id, "rebuild the index")
    fake.when(parent_replies)
    parent, _ = await open_parent(session_id=info.id)
    await wait_turns(parent, 2)
    transcript = await store.load(parent.id)
    prompts = [m.text() for m in transcript.messages if m.role == "user"]
    assert any("RESULT ONE" in p for p in prompts)
    assert any("dg-running was lost" in p and "rebuild the index" in p for p in prompts)
    rows = {r.id: r.status for r in await store.list_delegations(parent.id)}
    assert rows == {"dg-finished": "delivered", "dg-running": "delivered"}
    assert await store.list_delegations(parent.id, pending_only=True) == []


async def test_a_hard_cancel_records_a_background_result_without_starting_a_turn(
    fake: FakeProvider, open_parent: Parent, store: StoreClient
) -> None:
    from hermes.fake import Hang

    fake.when(Hang(), predicate=child_of("audit the logs"))
    fake.when(parent_replies)
    parent, _ = await open_parent()
    with parent.subscribe(approvals=True), trio.fail_after(5):
        await parent.run("start the audit")
        await parent.cancel()
    await trio.sleep(0.1)
    state = await parent.state()
    assert state.turn == 1 and not state.busy
    rows = await store.list_delegations(parent.id)
    assert [r.status for r in rows] == ["delivered"]
    assert rows[0].result is not None and "1 interrupted" in rows[0].result
