"""Subagents at the seed's defaults and authorities (issue 24, item 5): the role decided by
depth in code (#243), the workspace's context file in a child's prompt (#245), ten children
per parent with the rest queued (#240), 250 steps per child (#180)."""

from __future__ import annotations

from pathlib import Path

import trio

from hermes.daemon.config import load_config
from hermes.daemon.session_settings import subagent_config
from hermes.fake import FakeProvider, Hang, Reply
from hermes.subagents import SubagentConfig
from supervisors import Admission

from .conftest import (
    Parent,
    child_of,
    is_parent,
    script_middle_and_leaf,
    script_parent,
    system_of,
)
from .test_delegate import tool_names
from .test_stop_steer import wait_listed


async def test_depth_alone_makes_a_child_an_orchestrator_whatever_the_model_asks(
    fake: FakeProvider, open_parent: Parent
) -> None:
    # The model does not ask for an orchestrator; depth 1 of 2 makes one anyway.
    script_middle_and_leaf(fake, "plan the work below", orchestrate=False, relayed="middle done")
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


async def test_at_the_defaults_ten_children_run_per_parent_and_the_eleventh_waits(
    fake: FakeProvider, open_parent: Parent
) -> None:
    assert (SubagentConfig().max_concurrent_children, SubagentConfig().max_iterations) == (10, 250)
    fake.when(Hang(), predicate=child_of("wait on the provider"))
    script_parent(fake, {"tasks": [{"goal": f"wait on the provider {i}"} for i in range(11)]})
    parent, runtime = await open_parent()  # FAST: Hermes' defaults but the check interval
    await parent.prompt("go")
    listed = await wait_listed(
        parent, lambda ls: sorted(i.state for i in ls) == ["queued"] + ["running"] * 10, 20.0
    )
    (queued,) = [i for i in listed if i.state == "queued"]
    assert queued.goal == "wait on the provider 10"  # tasks start in the order given
    assert runtime.gate.running == 10
    with trio.fail_after(20):
        await parent.cancel()
    assert runtime.gate.running == 0


def test_the_config_files_defaults_are_the_seeds() -> None:
    sub = subagent_config(load_config(None, {}))
    assert (sub.max_concurrent_children, sub.max_iterations) == (10, 250)
    assert sub.admission is Admission.QUEUE  # Hermes' refusal is admission = "reject"
