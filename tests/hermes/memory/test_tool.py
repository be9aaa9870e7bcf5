"""The memory tool end to end through the tool registry, live and in a review draft."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.memory import (
    DRAFT_NOTE,
    SAVED_NOTE,
    LiveMemory,
    MemoryDraft,
    MemoryLimits,
    MemoryService,
    MemoryStore,
    MemoryTool,
)
from hermes.tools import ToolCall, ToolContext, ToolKind, ToolOutcome, ToolRegistry


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([MemoryTool()])


def context(tmp_path: Path, service: MemoryService | None) -> ToolContext:
    services: dict[type[Any], object] = {} if service is None else {MemoryService: service}
    return ToolContext.create(tmp_path, tmp_path / "spill", services=services)


@pytest.fixture
def live(tmp_path: Path, store: MemoryStore) -> ToolContext:
    return context(tmp_path, LiveMemory(store))


async def use(registry: ToolRegistry, ctx: ToolContext, **args: Any) -> ToolOutcome:
    with trio.fail_after(10):
        return await registry.call(ToolCall("m1", "memory", args), ctx)


def test_spec() -> None:
    tool = MemoryTool(MemoryLimits(memory_chars=3000, user_chars=500))
    spec = tool.spec()
    assert (tool.name, tool.toolset, tool.kind) == ("memory", "memory", ToolKind.OTHER)
    props = spec.input_schema["properties"]
    assert props["action"]["enum"] == ["add", "replace", "remove"]
    assert props["target"]["enum"] == ["memory", "user"] and props["target"]["default"] == "memory"
    assert set(props) == {"action", "target", "content", "old_text"}
    assert spec.input_schema["required"] == ["action"]
    assert "Do NOT save task progress" in spec.description
    assert "memory 3,000 chars, user 500 chars" in spec.description
    assert "2,200" in MemoryTool().description


async def test_add_live(registry: ToolRegistry, live: ToolContext, store: MemoryStore) -> None:
    outcome = await use(registry, live, action="add", content="Repo uses uv, not pip.")
    assert not outcome.is_error
    assert outcome.content == (
        "Added to MEMORY.md: 'Repo uses uv, not pip.'. MEMORY.md usage: 22/2,200 chars. "
        + SAVED_NOTE
    )
    assert "from the next session on" in outcome.content
    assert outcome.details["used"] == 22 and outcome.details["changed"] is True
    assert store.entries("memory") == ["Repo uses uv, not pip."]
    user = await use(registry, live, action="add", target="user", content="Name: Ada")
    assert "USER.md usage: 9/1,375 chars" in user.content
    assert store.entries("user") == ["Name: Ada"]


async def test_replace_and_remove_live(
    registry: ToolRegistry, live: ToolContext, store: MemoryStore
) -> None:
    store.add("memory", "Editor: vim")
    store.add("memory", "Shell: zsh")
    replaced = await use(registry, live, action="replace", old_text="vim", content="Editor: hx")
    assert replaced.content.startswith("Replaced in MEMORY.md: 'Editor: vim' -> 'Editor: hx'.")
    assert "MEMORY.md usage: 23/2,200 chars" in replaced.content
    removed = await use(registry, live, action="remove", old_text="zsh")
    assert removed.content.startswith("Removed from MEMORY.md: 'Shell: zsh'.")
    assert store.entries("memory") == ["Editor: hx"]


async def test_duplicate_add_is_not_an_error(
    registry: ToolRegistry, live: ToolContext, store: MemoryStore
) -> None:
    store.add("user", "Name: Ada")
    outcome = await use(registry, live, action="add", target="user", content="Name: Ada")
    assert not outcome.is_error
    assert outcome.content == (
        "This exact entry is already in USER.md; nothing changed. USER.md usage: 9/1,375 chars."
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"action": "delete", "old_text": "x"}, "Invalid arguments for tool 'memory'"),
        ({"action": "add", "target": "notes", "content": "x"}, "must be one of"),
        ({"action": "add", "content": "x", "extra": 1}, "Invalid arguments"),
        ({"content": "x"}, "missing required field 'action'"),
        ({"action": "add"}, "action 'add' needs content"),
        ({"action": "add", "content": "   "}, "action 'add' needs content"),
        ({"action": "replace", "content": "x"}, "action 'replace' needs old_text"),
        ({"action": "replace", "old_text": "vim"}, "action 'replace' needs content"),
        ({"action": "remove"}, "action 'remove' needs old_text"),
        ({"action": "remove", "old_text": "emacs"}, "No entry in MEMORY.md contains 'emacs'"),
        ({"action": "remove", "old_text": "Editor"}, "2 entries in MEMORY.md contain 'Editor'"),
    ],
)
async def test_errors(
    registry: ToolRegistry,
    live: ToolContext,
    store: MemoryStore,
    args: dict[str, Any],
    expected: str,
) -> None:
    store.add("memory", "Editor: vim")
    store.add("memory", "Editor config in ~/.vimrc")
    before = store.path("memory").read_bytes()
    outcome = await use(registry, live, **args)
    assert outcome.is_error
    assert expected in outcome.content
    assert store.path("memory").read_bytes() == before


async def test_full_store_error_text(registry: ToolRegistry, tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem", MemoryLimits(memory_chars=2200))
    store.add("memory", "x" * 2100)
    outcome = await use(
        registry, context(tmp_path, LiveMemory(store)), action="add", content="y" * 177
    )
    assert outcome.is_error and outcome.details["reason"] == "memory_full"
    assert outcome.content == (
        "MEMORY.md is full: 2,100 of 2,200 characters used; this entry needs 180. "
        "Replace or remove entries first."
    )


async def test_no_service_in_context(registry: ToolRegistry, tmp_path: Path) -> None:
    outcome = await use(registry, context(tmp_path, None), action="add", content="x")
    assert outcome.is_error and "Memory is not available here" in outcome.content
    assert not (tmp_path / "data").exists()


async def test_review_draft_through_the_tool(
    registry: ToolRegistry, tmp_path: Path, store: MemoryStore, memdir: Path
) -> None:
    store.add("memory", "Editor: vim")
    before = store.path("memory").read_bytes()
    draft = MemoryDraft(store)
    ctx = context(tmp_path, draft)
    added = await use(registry, ctx, action="add", content="Tests: pytest -X dev")
    assert not added.is_error and added.content.endswith(DRAFT_NOTE)
    assert "MEMORY.md usage: 34/2,200 chars" in added.content
    staged = await use(registry, ctx, action="replace", old_text="vim", content="Editor: hx")
    assert not staged.is_error
    proposal_id = staged.details["proposal"]
    assert staged.content == (
        f"Staged as proposal {proposal_id} for a person to approve: replace in MEMORY.md: "
        "'Editor: vim' -> 'Editor: hx'. Nothing changes until it is approved. "
        "MEMORY.md usage: 34/2,200 chars."
    )
    assert store.path("memory").read_bytes() == before and store.proposals() == []
    report = draft.commit("session-1")
    assert store.entries("memory") == ["Editor: vim", "Tests: pytest -X dev"]
    assert [p.id for p in store.proposals()] == [proposal_id] == [p.id for p in report.proposed]
    late = await use(registry, ctx, action="add", content="after the review")
    assert late.is_error and "already committed" in late.content
