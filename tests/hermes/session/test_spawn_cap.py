"""Hermes' loop cap on subagent-spawning calls (seed #191): past it the batch is refused
and the turn halts; the count starts again every turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionDeps, TurnEnd
from hermes.store import StoreClient
from hermes.tools import Tool, ToolContext, ToolOutcome, default_registry

from .conftest import SessionFactory
from .helpers import assert_valid, result_text, results_by_id


class Delegate(Tool):
    """Stands in for ``delegate_task``: what the cap counts is the tool's flag."""

    name = "delegate_task"
    spawns_subagents = True
    description = "start a subagent"
    input_schema: Mapping[str, Any] = {"type": "object"}

    def __init__(self) -> None:
        self.ran = 0

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        self.ran += 1
        return ToolOutcome.ok(f"delegated {self.ran}")


async def test_a_spawning_call_past_the_cap_is_refused_and_halts_the_turn(
    open_session: SessionFactory, deps: SessionDeps, fake: FakeProvider, store: StoreClient
) -> None:
    tool = Delegate()
    registry = default_registry()
    registry.register(tool)
    session = await open_session(spawn_cap=2, with_deps=attrs.evolve(deps, registry=registry))
    fake.enqueue(
        *(Reply.of(ToolUse("delegate_task", {}, id=f"toolu_{n}")) for n in (1, 2, 3)),
        Reply.of("never asked for"),
    )
    with trio.fail_after(20):
        capped = await session.run("fan out")
    assert capped.reason is TurnEnd.HALTED
    assert capped.detail == (
        "Turn halted: the turn reached its cap of 2 subagent-spawning calls (2 made, 1 more asked)."
    )
    assert tool.ran == 2 and fake.script.pending == 1
    results = results_by_id(await store.load(session.id))
    assert [result_text(results[f"toolu_{n}"]) for n in (1, 2)] == ["delegated 1", "delegated 2"]
    assert result_text(results["toolu_3"]).startswith(
        "[Tool call skipped: delegate_task did not run because the turn reached its cap"
    )
    fake.script.clear()
    fake.enqueue(Reply.of(ToolUse("delegate_task", {}, id="toolu_4")), Reply.of("fine"))
    with trio.fail_after(20):
        again = await session.run("once more")
    assert again.reason is TurnEnd.COMPLETED and tool.ran == 3  # counted per turn
    assert_valid(await store.load(session.id))
