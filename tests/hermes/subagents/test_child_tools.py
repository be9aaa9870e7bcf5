"""A child's tools (seed #244): the parent's, minus the blocked tools and toolsets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes.subagents.child import child_registry
from hermes.subagents.config import BLOCKED_TOOLS
from hermes.subagents.tasks import TaskSpec
from hermes.tools import Tool, ToolContext, ToolOutcome, default_registry


class Named(Tool):
    """A tool that is only its name and toolset (what a child's registry is built from)."""

    input_schema: Mapping[str, Any] = {"type": "object"}

    def __init__(self, name: str, toolset: str) -> None:
        self.name, self.toolset, self.description = name, toolset, name

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome.ok(self.name)


def test_a_child_never_gets_the_scheduler_or_a_kanban_workers_card_tools() -> None:
    parent = default_registry()
    for name, toolset in [
        ("cronjob", "cronjob"),
        ("kanban_complete", "kanban"),
        ("kanban_block", "kanban"),
        ("delegate_task", "delegation"),
    ]:
        parent.register(Named(name, toolset))
    leaf = child_registry(parent, TaskSpec(goal="g"), BLOCKED_TOOLS, False)
    orchestrator = child_registry(parent, TaskSpec(goal="g"), BLOCKED_TOOLS, True)
    for blocked in ("cronjob", "kanban_complete", "kanban_block", "delegate_task"):
        assert blocked not in leaf, blocked
    assert "delegate_task" in orchestrator and "cronjob" not in orchestrator
    assert "kanban_block" not in orchestrator
    assert "read_file" in leaf and "terminal" in leaf  # the rest is inherited
    asked = child_registry(parent, TaskSpec(goal="g", toolsets=("kanban",)), BLOCKED_TOOLS, False)
    assert "kanban_complete" not in asked  # naming the toolset does not bring it back
