from __future__ import annotations

import trio

from hermes.fake import FakeProvider, Reply, Text, ToolUse
from hermes.session import SessionHandle, TurnEnd
from hermes.store import StoreClient


async def test_turn_with_tools(session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir) -> None:
    (workdir / "a.txt").write_text("hello\n")
    fake.enqueue(Reply.of(Text("reading"), ToolUse("read_file", {"path": "a.txt"}), ToolUse("terminal", {"command": "echo hi"})))
    fake.enqueue(Reply.of("done"))
    with trio.fail_after(10):
        result = await session.run("read it")
    assert result.reason is TurnEnd.COMPLETED, result
    assert result.text == "done"
    t = await store.load(session.id)
    for m in t.messages:
        print(m.role, m.content)
    assert len(t.messages) == 4


async def test_cancel(session: SessionHandle, fake: FakeProvider, store: StoreClient) -> None:
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": "sleep 30"})))
    with session.subscribe() as sub:
        await session.prompt("sleep")
        with trio.fail_after(10):
            async for e in sub.receive:
                if e.type == "ToolStarted":
                    break
        t0 = trio.current_time()
        res = await session.cancel()
        print("cancel ms", (trio.current_time() - t0) * 1000)
    assert res.result.reason is TurnEnd.CANCELLED
    t = await store.load(session.id)
    for m in t.messages:
        print(m.role, m.content)
    assert t.open_tool_uses == ()
