"""Subagents at the seed's defaults and authorities (issue 24, item 5): the role decided by
depth in code (#243), the workspace's context file in a child's prompt (#245)."""

from __future__ import annotations

from pathlib import Path

import trio

from hermes.fake import FakeProvider, MessagesRequest, Reply, ToolUse

from .conftest import Parent, child_of, is_parent, script_parent, system_of
from .test_delegate import tool_names


async def test_depth_alone_makes_a_child_an_orchestrator_whatever_the_model_asks(
    fake: FakeProvider, open_parent: Parent
) -> None:
    def middle(req: MessagesRequest) -> Reply:
        if req.tool_results():
            return Reply.of("middle done")
        return Reply.of(ToolUse("delegate_task", {"goal": "bottom-level chore"}))

    fake.when(Reply.of("leaf answer"), predicate=child_of("bottom-level chore"))
    fake.when(middle, predicate=child_of("plan the work"))
    # The model does not ask for an orchestrator; depth 1 of 2 makes one anyway.
    script_parent(fake, {"goal": "plan the work below", "orchestrate": False})
    parent, _ = await open_parent(max_depth=2)
    with trio.fail_after(10):
        await parent.run("go")
    middle_request = next(r for r in fake.message_requests if child_of("plan the work")(r))
    leaf_request = next(r for r in fake.message_requests if child_of("bottom-level chore")(r))
    assert "delegate_task" in tool_names(middle_request)
    assert "delegate_task" not in tool_names(leaf_request)  # depth 2 of 2: a leaf


async def test_a_models_orchestrate_request_does_not_make_a_leaf_delegate(
    fake: FakeProvider, open_parent: Parent
) -> None:
    fake.when(Reply.of("leaf answer"), predicate=child_of("asks to orchestrate"))
    script_parent(fake, {"goal": "a child that asks to orchestrate", "orchestrate": True})
    parent, _ = await open_parent(max_depth=2, orchestrator_enabled=False)
    with trio.fail_after(10):
        await parent.run("go")
    request = next(r for r in fake.message_requests if child_of("asks to orchestrate")(r))
    assert "delegate_task" not in tool_names(request)


async def test_a_child_gets_its_workspaces_context_file(
    fake: FakeProvider, open_parent: Parent, workdir: Path
) -> None:
    (workdir / "AGENTS.md").write_text("Always run the linter before you report.\n")
    fake.when(Reply.of("read the rules"), predicate=child_of("follow the rules"))
    script_parent(fake, {"goal": "follow the rules of the project"})
    parent, _ = await open_parent()  # the parent itself loads no context files here
    with trio.fail_after(10):
        await parent.run("go")
    child = next(r for r in fake.message_requests if child_of("follow the rules")(r))
    system = system_of(child)
    assert "Always run the linter before you report." in system
    assert "# Project context (AGENTS.md, from " in system and workdir.name in system
    first_parent = next(r for r in fake.message_requests if is_parent(r))
    assert "Always run the linter" not in system_of(first_parent)
