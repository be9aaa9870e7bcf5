"""A redirect while a foreground command runs moves it to the background (issue 24,
item 1; seeds #8, #13, #220); an interrupt still kills it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, MessagesRequest, Reply, ToolUse
from hermes.processes import ProcessConfig
from hermes.processes.yielded import NOTE as REDIRECT_NOTE
from hermes.session import SessionConfig, SessionDeps, SessionHandle, TurnEnd, start_session
from hermes.store import StoreClient
from hermes.tools.builtin.process_tool import REDIRECTED_WAIT

from .control_helpers import gated, next_event, request_messages, turn_completed, wire_texts
from .helpers import assert_valid


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def marker_then_gate(workdir: Path) -> str:
    return f"echo started-marker; echo $$ > {workdir}/pid; " + gated("go", "echo gate-open")


def contents(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


async def wait_for(path: Path) -> str:
    while not contents(path):  # noqa: ASYNC110 - a file
        await trio.sleep(0.01)
    return contents(path)


async def test_a_redirect_moves_the_foreground_command_to_the_background(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": marker_then_gate(workdir)}, id="toolu_fg")),
        Reply.of(ToolUse("process", {"action": "list"}, id="toolu_list")),
        Reply.of("took the correction"),
        Reply.of("noted the end"),  # the completion notice's turn
    )
    with trio.fail_after(30), session.subscribe() as sub:
        await session.prompt("run it")
        await next_event(sub, "ToolStarted")
        pid = int(await wait_for(workdir / "pid"))
        accepted = await session.prompt("actually, do the other thing")
        done = await turn_completed(sub, 1)
        assert alive(pid)  # still running after the turn took the correction
        (workdir / "go").touch()
        await turn_completed(sub, 2)  # the completion notice ran as a turn
    assert accepted.how == "steered"
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "took the correction"
    second = request_messages(fake.message_requests[1])[-1]
    moved = str(second["content"][0]["content"])
    assert "started-marker" in moved and "moved to the background as proc_" in moved
    process_id = re.search(r"proc_\w+", moved).group(0)  # type: ignore[union-attr]
    assert "actually, do the other thing" in wire_texts(second)[0]
    listed = str(request_messages(fake.message_requests[2])[-1]["content"][0]["content"])
    assert process_id in listed and "running" in listed
    rows = await store.list_processes(session_id=session.id)
    [row] = [r for r in rows if r.id == process_id]
    assert row.status == "exited" and row.exit_code == 0 and row.pid == pid
    assert not [r for r in rows if r.foreground]  # the foreground row was replaced
    transcript = await store.load(session.id)
    assert_valid(transcript)
    [notice] = [m.text() for m in transcript.messages if "gate-open" in m.text()]
    assert notice.startswith(f"[Background process {process_id}") and REDIRECT_NOTE in notice


async def test_an_interrupt_still_kills_the_foreground_command(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": marker_then_gate(workdir)}, id="toolu_fg"))
    )
    with trio.fail_after(30), session.subscribe() as sub:
        await session.prompt("run it")
        await next_event(sub, "ToolStarted")
        pid = int(await wait_for(workdir / "pid"))
        await session.interrupt("stop")
        done = await turn_completed(sub, 1)
    assert done.reason == TurnEnd.INTERRUPTED.value
    assert not alive(pid)
    transcript = await store.load(session.id)
    assert "[Command interrupted]" in str(transcript.messages[2].content[0])
    assert not await store.list_processes(session_id=session.id, foreground=False)


async def test_a_redirect_moves_an_on_timeout_background_command_at_once(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    """``on_timeout="background"``: under a watcher from its start, and no longer waited
    for once the user redirects (not kept until its 300 s timeout)."""
    call = {"command": marker_then_gate(workdir), "timeout": 300, "on_timeout": "background"}
    fake.enqueue(
        Reply.of(ToolUse("terminal", call, id="toolu_fg")),
        Reply.of(ToolUse("process", {"action": "list"}, id="toolu_list")),
        Reply.of("took the correction"),
        Reply.of("noted the end"),  # the completion notice's turn
    )
    with trio.fail_after(60), session.subscribe() as sub:
        await session.prompt("run it")
        await next_event(sub, "ToolStarted")
        pid = int(await wait_for(workdir / "pid"))
        redirected_at = trio.current_time()
        accepted = await session.prompt("actually, do the other thing")
        done = await turn_completed(sub, 1)
        took = trio.current_time() - redirected_at
        assert alive(pid)  # still running after the turn took the correction
        (workdir / "go").touch()
        await turn_completed(sub, 2)  # the completion notice ran as a turn
    assert took < 60 < 300  # the fail_after: far from the command's timeout
    assert accepted.how == "steered"
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "took the correction"
    second = request_messages(fake.message_requests[1])[-1]
    moved = str(second["content"][0]["content"])
    assert "started-marker" in moved  # the output so far
    assert "The user redirected the turn while this command ran" in moved
    assert "moved to the background as proc_" in moved and "timed out" not in moved
    process_id = re.search(r"proc_\w+", moved).group(0)  # type: ignore[union-attr]
    assert "actually, do the other thing" in wire_texts(second)[0]
    listed = str(request_messages(fake.message_requests[2])[-1]["content"][0]["content"])
    assert process_id in listed and "running" in listed
    rows = await store.list_processes(session_id=session.id)
    [row] = [r for r in rows if r.id == process_id]
    assert row.status == "exited" and row.exit_code == 0 and row.pid == pid
    transcript = await store.load(session.id)
    assert_valid(transcript)
    [notice] = [m.text() for m in transcript.messages if "gate-open" in m.text()]
    assert notice.startswith(f"[Background process {process_id}") and REDIRECT_NOTE in notice


async def test_an_interrupt_still_kills_an_on_timeout_background_command(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    call = {"command": marker_then_gate(workdir), "timeout": 300, "on_timeout": "background"}
    fake.enqueue(Reply.of(ToolUse("terminal", call, id="toolu_fg")))
    with trio.fail_after(60), session.subscribe() as sub:
        await session.prompt("run it")
        await next_event(sub, "ToolStarted")
        pid = int(await wait_for(workdir / "pid"))
        await session.interrupt("stop")
        done = await turn_completed(sub, 1)
    assert done.reason == TurnEnd.INTERRUPTED.value
    assert not alive(pid)
    transcript = await store.load(session.id)
    assert "[Command interrupted]" in str(transcript.messages[2].content[0])


@pytest.mark.parametrize("extra", [{}, {"timeout": 300, "on_timeout": "background"}])
async def test_with_background_on_redirect_off_a_redirect_waits_for_the_command(
    system: ActorSystem,
    config: SessionConfig,
    deps: SessionDeps,
    fake: FakeProvider,
    workdir: Path,
    extra: dict[str, Any],
) -> None:
    off = attrs.evolve(deps, processes=ProcessConfig(background_on_redirect=False))
    session = await start_session(system, config, off)
    call = {"command": marker_then_gate(workdir), **extra}
    fake.enqueue(Reply.of(ToolUse("terminal", call, id="toolu_fg")), Reply.of("after it ended"))
    with trio.fail_after(60), session.subscribe() as sub:
        await session.prompt("run it")
        await next_event(sub, "ToolStarted")
        await wait_for(workdir / "pid")
        accepted = await session.prompt("actually, do the other thing")
        (workdir / "go").touch()  # only now can the command end (and the turn go on)
        done = await turn_completed(sub, 1)
    assert accepted.how == "steered" and done.text == "after it ended"
    second = request_messages(fake.message_requests[1])[-1]
    result = str(second["content"][0]["content"])
    assert "gate-open" in result and "[exit code: 0]" in result  # it was waited for
    assert "moved to the background" not in result
    assert "actually, do the other thing" in wire_texts(second)[0]


def wait_on_the_started_process(request: MessagesRequest) -> Reply:
    """The model's next step: wait for the background process the last result named."""
    result = str(request.body["messages"][-1]["content"][0]["content"])
    process_id = re.search(r"proc_\w+", result).group(0)  # type: ignore[union-attr]
    wait = {"action": "wait", "process_id": process_id, "timeout": 180}
    return Reply.of(ToolUse("process", wait, id="toolu_wait"))


async def test_a_redirect_ends_a_process_wait_and_the_process_runs_on(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    """``process wait`` is a redirect's seam too: it answers at once (not after 180 s),
    the process keeps running, and the correction follows the answer."""
    call = {"command": marker_then_gate(workdir), "background": True}
    fake.enqueue(
        Reply.of(ToolUse("terminal", call, id="toolu_bg")),
        wait_on_the_started_process,
        Reply.of("took the correction"),
    )
    with trio.fail_after(60), session.subscribe() as sub:
        await session.prompt("run it in the background and wait for it")
        pid = int(await wait_for(workdir / "pid"))
        await next_event(sub, "ToolStarted", lambda p: p.name == "process")
        accepted = await session.prompt("actually, do the other thing")
        done = await turn_completed(sub, 1)
        assert alive(pid)  # the wait ended, the process did not
    assert accepted.how == "steered"
    assert done.reason == TurnEnd.COMPLETED.value and done.text == "took the correction"
    third = request_messages(fake.message_requests[2])[-1]
    answer = str(third["content"][0]["content"])
    assert answer.startswith(REDIRECTED_WAIT) and "running" in answer
    assert "actually, do the other thing" in wire_texts(third)[0]
    assert_valid(await store.load(session.id))
