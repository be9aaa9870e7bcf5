"""Stop gates through a real session: the stall guard, verify-on-stop, late checker verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionHandle
from hermes.stopgates import LateChecks, StopSettings, Ticket, announces_next_step
from hermes.stopgates.stall import NUDGE as STALL_NUDGE
from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome, ToolRegistry, default_registry

from .conftest import SessionFactory
from .helpers import body_texts, payloads

TICKETS: list[Ticket] = []
ARRIVED: list[trio.Event] = []


class LintLaterTool(Tool):
    """A checker that cannot finish within its call: it takes a late-check ticket."""

    name = "lint_later"
    description = "Start a slow lint of a path; its verdict comes later."
    kind = ToolKind.READ_ONLY
    toolset = "test"
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return ()

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        TICKETS.append(ctx.service(LateChecks).expect("slowlint", args["path"]))
        for event in ARRIVED:
            event.set()
        return ToolOutcome.ok("lint started; its verdict comes later")


@pytest.fixture
def registry() -> ToolRegistry:
    registry = default_registry()
    registry.register(LintLaterTool())
    return registry


def last_user_texts(fake: FakeProvider) -> list[str]:
    texts = [body_texts(r.body["messages"][-1]) for r in fake.message_requests]
    return [t[-1] if t else "" for t in texts]


async def test_a_reply_announcing_a_next_step_gets_one_nudge(
    session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(
        Reply.of("I'll now run the tests."),
        Reply.of(ToolUse("terminal", {"command": "echo 3 passed"})),
        Reply.of("Let me now check the coverage."),  # a second stall: no second nudge
    )
    with session.subscribe() as sub, trio.fail_after(20):
        result = await session.run("fix the bug")
        events = [e async for e in _drain(sub)]
    assert result.text == "Let me now check the coverage."
    assert last_user_texts(fake)[1] == STALL_NUDGE
    nudged = payloads(events, "StopNudged")
    assert [(n.gate, n.turn) for n in nudged] == [("stall_guard", 1)]
    assert len(fake.message_requests) == 3


async def test_the_stall_guard_can_be_turned_off(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    session = await open_session(stops=StopSettings(stall_guard=False))
    fake.enqueue(Reply.of("I'll now run the tests."))
    with trio.fail_after(20):
        result = await session.run("fix the bug")
    assert result.text == "I'll now run the tests." and len(fake.message_requests) == 1


def test_what_counts_as_announcing_a_next_step() -> None:
    assert announces_next_step("Fixed the import. Next, I will run the suite.")
    assert announces_next_step("Now I'll update the docs:")
    assert not announces_next_step("I'll now explain. The bug was in the parser.")
    assert not announces_next_step("Done. All 12 tests pass.")
    assert not announces_next_step("x" * 400 + " I'll now run the tests.")


async def test_verify_on_stop_sends_edited_code_back_once(
    open_session: SessionFactory, fake: FakeProvider, workdir: Path
) -> None:
    session = await open_session(stops=StopSettings(verify_on_stop=True))
    fake.enqueue(
        Reply.of(ToolUse("write_file", {"path": "calc.py", "content": "X = 1\n"})),
        Reply.of(ToolUse("write_file", {"path": "NOTES.md", "content": "notes\n"})),
        Reply.of("Done, calc.py is written."),
        Reply.of(ToolUse("terminal", {"command": "test -f calc.py && echo check ok"})),
        Reply.of("Verified: check ok."),
    )
    with session.subscribe() as sub, trio.fail_after(20):
        result = await session.run("write calc.py")
        events = [e async for e in _drain(sub)]
    assert result.text == "Verified: check ok."
    nudge = last_user_texts(fake)[3]
    assert "no passing check" in nudge and "- calc.py" in nudge and "NOTES.md" not in nudge
    assert [n.gate for n in payloads(events, "StopNudged")] == ["verify_on_stop"]


async def test_verify_on_stop_is_off_by_default_and_prose_needs_no_check(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("write_file", {"path": "calc.py", "content": "X = 1\n"})),
        Reply.of("Done."),
    )
    session = await open_session()
    with trio.fail_after(20):
        assert (await session.run("write calc.py")).text == "Done."
    await session.close()
    on = await open_session(stops=StopSettings(verify_on_stop=True))
    fake.enqueue(
        Reply.of(ToolUse("write_file", {"path": "README.md", "content": "hi\n"})),
        Reply.of("Done with the readme."),
    )
    with trio.fail_after(20):
        assert (await on.run("write the readme")).text == "Done with the readme."
    assert len(fake.message_requests) == 4


async def test_late_checker_verdicts_send_the_answer_back_to_fix_them(
    session: SessionHandle, fake: FakeProvider
) -> None:
    TICKETS.clear()
    arrived = trio.Event()
    ARRIVED[:] = [arrived]
    fake.enqueue(
        Reply.of(ToolUse("lint_later", {"path": "app.py"})),
        Reply.of("All done."),
        Reply.of("Fixed the unused import."),
    )

    async def checker() -> None:  # the slow lint finishes while the answer waits for it
        await arrived.wait()
        await trio.sleep(0.3)
        TICKETS[0].deliver(["app.py:3: unused import os"])

    with session.subscribe() as sub, trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(checker)
            result = await session.run("clean up app.py")
        events = [e async for e in _drain(sub)]
    assert result.text == "Fixed the unused import."
    nudge = last_user_texts(fake)[2]
    assert "- slowlint on app.py: app.py:3: unused import os" in nudge
    assert [n.gate for n in payloads(events, "StopNudged")] == ["late_checks"]


async def test_a_late_check_that_never_reports_holds_the_answer_only_for_the_wait(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    TICKETS.clear()
    session = await open_session(stops=StopSettings(late_wait=0.2))
    fake.enqueue(Reply.of(ToolUse("lint_later", {"path": "a.py"})), Reply.of("Done."))
    with trio.fail_after(20):
        result = await session.run("lint a.py")
    assert result.text == "Done." and len(fake.message_requests) == 2
    TICKETS[0].deliver(["too late"])  # given up on: dropped, nothing breaks


async def _drain(sub: Any) -> Any:
    """What the subscription holds now (the turn has ended)."""
    while True:
        with trio.move_on_after(0.05):
            yield await sub.receive.receive()
            continue
        return
