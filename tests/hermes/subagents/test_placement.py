"""Where a delegation runs (issue 24, item 5; seed #252): code decides at the default
(the top level's in the background, a subagent's inline; inline with a note when nobody
could take a later result or the background pool is full); ``background = "model"``
lets the model's flag decide."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

from hermes.fake import FakeProvider, Hang, MessagesRequest, Reply, ToolUse
from hermes.session import SessionHandle
from hermes.store import StoreClient

from .conftest import Parent, child_of, is_parent
from .test_background import wait_turns


def block_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content)
    return str(content)


def tool_results_of(fake: FakeProvider, sender: Callable[[Any], bool]) -> list[str]:
    """Every tool result ``sender``'s model read, in order, once each (retries repeat)."""
    seen: dict[str, str] = {}
    for record in fake.message_requests:
        if sender(record):
            for block in MessagesRequest(record.body, record).tool_results():
                seen.setdefault(block["tool_use_id"], block_text(block))
    return list(seen.values())


def parent_tool_results(fake: FakeProvider) -> list[str]:
    return tool_results_of(fake, is_parent)


def delegating_parent(fake: FakeProvider, args: dict[str, Any]) -> None:
    """The parent delegates ``args`` on each prompt and reads background results."""

    def reply(req: MessagesRequest) -> Reply | None:
        if not is_parent(req):
            return None
        if "Background delegation" in req.last_user_text():
            return Reply.of("noted the background result")
        if req.tool_results():
            return Reply.of("parent carries on")
        return Reply.of(ToolUse("delegate_task", args))

    fake.when(reply)


async def run(parent: SessionHandle, text: str) -> None:
    with trio.fail_after(10):
        await parent.run(text)


async def delegate_twice(
    fake: FakeProvider,
    open_parent: Parent,
    first: dict[str, Any],
    second: dict[str, Any],
    **config: Any,
) -> tuple[str, str]:
    """An attended parent delegates ``first`` on one prompt, then ``second`` on the next
    while the first may still run; the two tool results its model read."""

    def reply(req: MessagesRequest) -> Reply | None:
        if not is_parent(req):
            return None
        if req.tool_results():
            return Reply.of("parent carries on")
        return Reply.of(ToolUse("delegate_task", first if req.last_user_text() == "1" else second))

    fake.when(reply)
    parent, _ = await open_parent(**config)
    with parent.subscribe(approvals=True):
        await run(parent, "1")
        await run(parent, "2")
        results = parent_tool_results(fake)
        await parent.cancel()
    assert len(results) == 2, results
    return results[0], results[1]


async def test_code_puts_the_top_levels_call_in_the_background_and_a_subagents_inline(
    fake: FakeProvider, open_parent: Parent, store: StoreClient
) -> None:
    def middle(req: MessagesRequest) -> Reply:
        if req.tool_results():
            return Reply.of("middle relayed: " + block_text(req.tool_results()[0]))
        return Reply.of(ToolUse("delegate_task", {"goal": "leaf chore", "background": True}))

    fake.when(Reply.of("leaf answer"), predicate=child_of("leaf chore"))
    fake.when(middle, predicate=child_of("plan the chores"))
    delegating_parent(fake, {"goal": "plan the chores", "background": False})  # flag ignored
    parent, _ = await open_parent(max_depth=2)
    with parent.subscribe(approvals=True):  # a person's chat is attached
        await run(parent, "go")
        assert parent_tool_results(fake)[0].startswith("Started background delegation dg-")
        await wait_turns(parent, 2, timeout=10)
    middle_reads = tool_results_of(fake, child_of("plan the chores"))
    assert middle_reads[0].startswith("[Delegation dg-")  # the subagent's call ran inline
    assert "leaf answer" in middle_reads[0]
    transcript = await store.load(parent.id)
    assert "middle relayed" in transcript.messages[4].text()
    assert transcript.messages[5].text() == "noted the background result"


async def test_with_nobody_attached_a_top_level_call_runs_inline_with_a_note(
    fake: FakeProvider, open_parent: Parent
) -> None:
    fake.when(Reply.of("done headless"), predicate=child_of("headless chore"))
    delegating_parent(fake, {"goal": "headless chore", "background": True})
    parent, _ = await open_parent()
    await run(parent, "go")  # no approver: a cron run or an HTTP client's request
    (result,) = parent_tool_results(fake)
    assert result.startswith(
        "[Ran inline, not in the background: nobody is attached to this session"
    )
    assert "done headless" in result


async def test_at_the_background_limit_a_top_level_call_runs_inline_with_a_note(
    fake: FakeProvider, open_parent: Parent
) -> None:
    fake.when(Hang(), predicate=child_of("slow chore"))
    fake.when(Reply.of("quick answer"), predicate=child_of("quick chore"))
    first, second = await delegate_twice(
        fake, open_parent, {"goal": "slow chore"}, {"goal": "quick chore"}, max_background=1
    )
    assert first.startswith("Started background delegation")
    assert second.startswith("[Ran inline, not in the background: this session's background")
    assert "quick answer" in second


async def test_the_background_pool_counts_subagents_not_delegations(
    fake: FakeProvider, open_parent: Parent
) -> None:
    """Seed #252: the pool is in children. Two slow tasks running in the background leave
    room for one more in a pool of 3, so a second call with two tasks runs inline."""
    fake.when(Hang(), predicate=lambda r: child_of("slow one")(r) or child_of("slow two")(r))
    fake.when(Reply.of("quick answer"), predicate=child_of("quick chore"))
    slow = {"tasks": [{"goal": "slow one"}, {"goal": "slow two"}]}
    quick = {"tasks": [{"goal": "quick chore"}, {"goal": "quick chore again"}]}

    first, second = await delegate_twice(fake, open_parent, slow, quick, max_background=3)
    assert first.startswith("Started background delegation")
    assert second.startswith(
        "[Ran inline, not in the background: this session's background subagents would exceed"
    )
    assert second.count("quick answer") == 2


async def test_in_model_mode_the_models_flag_decides(
    fake: FakeProvider, open_parent: Parent
) -> None:
    fake.when(Reply.of("chore done"), predicate=child_of("a chore"))

    def reply(req: MessagesRequest) -> Reply | None:
        if not is_parent(req):
            return None
        if "Background delegation" in req.last_user_text():
            return Reply.of("noted")
        if req.tool_results():
            return Reply.of("parent carries on")
        asked = req.last_user_text() == "in the background"
        return Reply.of(ToolUse("delegate_task", {"goal": "a chore", "background": asked}))

    fake.when(reply)
    parent, _ = await open_parent(background="model")
    with parent.subscribe(approvals=True):
        await run(parent, "inline")
        await run(parent, "in the background")
        await wait_turns(parent, 3, timeout=10)
    inline, background = parent_tool_results(fake)
    assert inline.startswith("[Delegation dg-") and "chore done" in inline
    assert background.startswith("Started background delegation dg-")
