"""Background processes through a session: notices become input; closing kills them."""

from __future__ import annotations

import re
from pathlib import Path

import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.model import ToolResultBlock
from hermes.session import SessionHandle, TurnEnd
from hermes.store import StoreClient

from .helpers import assert_valid


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


async def test_completion_notice_starts_a_turn(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(
        Reply.of(
            ToolUse(
                "terminal",
                {
                    "command": "sleep 0.3; echo built",
                    "background": True,
                    "notify_on_complete": True,
                },
            )
        ),
        Reply.of("started the build"),
        Reply.of("the build finished"),  # the turn the notice starts
    )
    with session.subscribe() as sub, trio.fail_after(15):
        first = await session.run("build it in the background")
        assert first.reason is TurnEnd.COMPLETED
        noticed = []
        async for event in sub.receive:  # the notice arrives and runs as a new turn
            if event.type == "ProcessNoticed":
                noticed.append(event.payload)
            if event.type == "TurnCompleted" and event.payload.turn == 2:
                break
    assert [n.kind for n in noticed] == ["completed"]
    transcript = await store.load(session.id)
    assert_valid(transcript)
    texts = [m.text() for m in transcript.messages if m.role == "user"]
    assert any("built" in t for t in texts[1:]), texts
    assert transcript.messages[-1].text() == "the build finished"


async def test_closing_the_session_kills_its_background_processes(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of(
            ToolUse("terminal", {"command": "sleep 60 & echo $! > pid; wait", "background": True})
        ),
        Reply.of("it runs"),
    )
    with trio.fail_after(15):
        result = await session.run("start a long job")
        assert result.reason is TurnEnd.COMPLETED
        pid_file = workdir / "pid"
        while not pid_file.exists() or not pid_file.read_text().strip():  # noqa: ASYNC110 - a file
            await trio.sleep(0.01)
        pid = int(pid_file.read_text())
        assert alive(pid)
        transcript = await store.load(session.id)
        [answer] = [b for b in transcript.messages[2].content if isinstance(b, ToolResultBlock)]
        assert re.search(r"proc_\w+", str(answer.content)), answer.content
        await session.close()
        assert not alive(pid)  # the grandchild is gone, not just the shell, once close returns
