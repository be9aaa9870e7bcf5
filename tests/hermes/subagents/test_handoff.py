"""A subagent hands a background process to its parent (issue 7 item 7, issue 6 item 8).

The fake provider scripts a parent that delegates and a child that starts two
background processes and hands one over. After the child ends, the handed one
is alive and the parent's model lists, polls and (on close) loses it; the other
died with the child. ``/proc`` is the judge (zombies count as alive there).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import trio

from hermes.fake import FakeProvider, MessagesRequest, Reply, ToolUse
from hermes.session import events as ev
from hermes.store import StoreClient

from .conftest import Parent, child_of, is_parent

GOAL = "start the dev server for the parent"


def _results(req: MessagesRequest) -> list[str]:
    """The text of every tool result in the conversation so far, in order."""
    texts: list[str] = []
    for message in req.messages:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    inner = "".join(b.get("text", "") for b in inner if isinstance(b, dict))
                texts.append(str(inner))
    return texts


def _proc_id(text: str) -> str:
    match = re.search(r"proc_[0-9a-f]{12}", text)
    assert match is not None, text
    return match.group(0)


def child_script(workdir: Path) -> Any:
    def reply(req: MessagesRequest) -> Reply | None:
        if not child_of(GOAL)(req):
            return None
        done = _results(req)
        if len(done) == 0:
            command = f"echo $$ > {workdir / 'server.pid'}; exec sleep 310"
            return Reply.of(ToolUse("terminal", {"command": command, "background": True}))
        if len(done) == 1:
            command = f"echo $$ > {workdir / 'scratch.pid'}; exec sleep 311"
            return Reply.of(ToolUse("terminal", {"command": command, "background": True}))
        if len(done) == 2:  # both shells have written their pid before the child goes on
            files = " && ".join(f"[ -s {workdir / n} ]" for n in ("server.pid", "scratch.pid"))
            command = f"timeout 9 sh -c 'until {files}; do sleep 0.02; done'"
            return Reply.of(ToolUse("terminal", {"command": command}))
        if len(done) == 3:
            server = _proc_id(done[0])
            return Reply.of(ToolUse("process", {"action": "handoff", "process_id": server}))
        return Reply.of("the dev server runs; I handed it over")

    return reply


def parent_script(req: MessagesRequest) -> Reply | None:
    if not is_parent(req):
        return None
    done = _results(req)
    if not done:
        return Reply.of(ToolUse("delegate_task", {"goal": GOAL}))
    if len(done) == 1:
        server = _proc_id(done[0].split("Handed over to you:")[1])
        return Reply.of(ToolUse("process", {"action": "poll", "process_id": server}))
    return Reply.of("the server is mine now")


def pid_in(path: Path) -> int:
    return int(path.read_text().split()[0])


def exists(pid: int) -> bool:
    """Anything at ``/proc/<pid>``, a zombie included."""
    return Path(f"/proc/{pid}").exists()


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


async def test_a_handed_process_outlives_its_subagent_and_dies_with_the_parent(
    fake: FakeProvider, open_parent: Parent, store: StoreClient, workdir: Path
) -> None:
    fake.when(child_script(workdir))
    fake.when(parent_script)
    parent, _ = await open_parent()
    with parent.subscribe() as sub, trio.fail_after(9):
        result = await parent.run("get me a dev server")
        events = sub.drain()
    assert result.text == "the server is mine now"
    server, scratch = pid_in(workdir / "server.pid"), pid_in(workdir / "scratch.pid")
    assert alive(server)  # handed over: it outlived the child
    assert not exists(scratch)  # not handed over: gone with the child, no zombie

    transcript = await store.load(parent.id)
    tool_results = [str(m) for m in transcript.messages if m.role == "user"][1:]
    delegation, poll = tool_results
    assert "Handed over to you: proc_" in delegation
    server_id = _proc_id(delegation.split("Handed over to you:")[1])
    assert server_id in poll and "running" in poll and "exec sleep 310" in poll
    assert "handed over by subagent session" in poll

    noticed = [e.payload for e in events if isinstance(e.payload, ev.ProcessNoticed)]
    assert [(n.kind, n.process_id) for n in noticed] == [("handed_over", server_id)]
    rows = await store.list_processes(session_id=parent.id, active_only=True)
    assert [r.id for r in rows] == [server_id]  # the checkpoint row is the parent's now

    with trio.fail_after(9):
        await parent.close()
    assert not exists(server)  # the parent's close killed and reaped it
    (row,) = await store.list_processes(session_id=parent.id)
    assert row.status == "killed"


async def test_a_top_level_session_has_no_handoff_action(
    fake: FakeProvider, open_parent: Parent
) -> None:
    seen: list[list[str]] = []

    def reply(req: MessagesRequest) -> Reply | None:
        for tool in req.body.get("tools", []):
            if tool.get("name") == "process":
                seen.append(tool["input_schema"]["properties"]["action"]["enum"])
        return Reply.of("ok")

    fake.when(reply)
    parent, _ = await open_parent()
    with trio.fail_after(5):
        await parent.run("hello")
    assert seen and "handoff" not in seen[0]
