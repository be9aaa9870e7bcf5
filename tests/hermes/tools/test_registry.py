"""The registry: specs, subsets, resolution, validation, crashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.model.types import ToolSpec
from hermes.tools import (
    ToolCall,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolProgress,
    ToolRegistry,
    ToolSnapshot,
    builtin_tools,
)

from .helpers import Crasher, Probe, Sleeper


def test_builtin_specs() -> None:
    registry = ToolRegistry(builtin_tools())
    specs = registry.specs()
    assert [s.name for s in specs] == [
        "terminal",
        "read_file",
        "write_file",
        "patch",
        "search_files",
    ]
    for spec in specs:
        assert isinstance(spec, ToolSpec)
        assert spec.description
        assert spec.input_schema["type"] == "object"
        assert spec.input_schema["required"]


def test_specs_are_built_once_per_set_of_tools() -> None:
    registry = ToolRegistry(builtin_tools())
    specs = registry.specs()
    assert registry.specs() is specs  # a session asks before every request
    registry.unregister("patch")
    fewer = registry.specs()
    assert fewer is not specs and "patch" not in [s.name for s in fewer]
    registry.register(Crasher())
    assert [s.name for s in registry.specs()][-1] == Crasher().name


def test_a_snapshot_is_a_value_that_never_changes() -> None:
    registry = ToolRegistry(builtin_tools())
    snapshot = registry.snapshot()
    assert registry.snapshot() is snapshot  # the same object until the set changes
    assert snapshot.specs() is registry.specs()  # and the same tuple (its encoding reused)
    assert isinstance(snapshot, ToolSnapshot) and snapshot.snapshot() is snapshot
    with pytest.raises(TypeError, match="cannot change: 'crash' was not registered"):
        snapshot.register(Crasher())
    with pytest.raises(TypeError, match="cannot change: 'patch' was not removed"):
        snapshot.unregister("patch")
    registry.unregister("patch")
    registry.register(Crasher())
    assert "patch" in snapshot and "crash" not in snapshot  # taken before: as it was
    later = registry.snapshot()
    assert later is not snapshot and "patch" not in later and "crash" in later
    assert later.get("crash") is registry.get("crash")  # the callables themselves
    with pytest.raises(ValueError, match="must name its tools"):
        ToolSnapshot(builtin_tools(), snapshot.specs()[:1])


def test_a_watch_is_told_once_per_change_until_it_watches_again() -> None:
    registry = ToolRegistry(builtin_tools())
    told: list[str] = []
    registry.watch("a", lambda: told.append("a"))
    registry.watch("b", lambda: told.append("b"))
    registry.unwatch("b")
    registry.unregister("patch")
    registry.unregister("terminal")  # a burst: the watch was told at the first change
    registry.unregister("no-such-tool")  # no change: nobody is told
    assert told == ["a"]
    registry.watch("a", lambda: told.append("again"))
    registry.unregister("no-such-tool")
    assert told == ["a"]
    registry.register(Crasher())
    assert told == ["a", "again"]
    registry.snapshot().watch("x", lambda: told.append("x"))  # a snapshot never changes
    registry.unregister("crash")
    assert told == ["a", "again"]


def test_register_get_and_duplicates() -> None:
    registry = ToolRegistry()
    tool = Sleeper("sleep", ToolKind.READ_ONLY, Probe())
    registry.register(tool)
    assert registry.get("sleep") is tool and "sleep" in registry and len(registry) == 1
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Sleeper("sleep", ToolKind.OTHER, Probe()))
    other = Sleeper("sleep", ToolKind.OTHER, Probe())
    registry.register(other, replace=True)
    assert registry.get("sleep") is other
    registry.unregister("sleep")
    assert registry.get("sleep") is None


def test_subset_never_gains_tools() -> None:
    registry = ToolRegistry(builtin_tools())
    child = registry.subset(["read_file", "terminal", "delegate_task"])
    assert child.names() == ("terminal", "read_file")
    files = registry.subset(toolsets=["file"])
    assert files.names() == ("read_file", "write_file", "patch", "search_files")
    assert len(registry.subset()) == 0


async def test_unknown_tool_names_the_available_ones(ctx: ToolContext) -> None:
    registry = ToolRegistry(builtin_tools())
    outcome = await registry.call(ToolCall("1", "read_files", {"path": "x"}), ctx)
    assert outcome.is_error
    assert "Unknown tool 'read_files'" in outcome.content
    assert "read_file, write_file" in outcome.content


async def test_invalid_arguments_are_an_error_result(ctx: ToolContext) -> None:
    registry = ToolRegistry(builtin_tools())
    outcome = await registry.call(ToolCall("1", "read_file", {}), ctx)
    assert outcome.is_error and "missing required field 'path'" in outcome.content
    outcome = await registry.call(ToolCall("1", "read_file", '{"path": "x"}'), ctx)
    assert outcome.is_error and "must be a JSON object" in outcome.content


async def test_coerced_arguments_reach_the_tool(ctx: ToolContext, workdir: Path) -> None:
    (workdir / "f.txt").write_text("a\nb\nc\n")
    registry = ToolRegistry(builtin_tools())
    outcome = await registry.call(
        ToolCall("1", "read_file", {"path": "f.txt", "offset": "2", "limit": "1"}), ctx
    )
    assert outcome.content.startswith("     2|b")


async def test_a_crashing_tool_becomes_an_error_result(ctx: ToolContext) -> None:
    registry = ToolRegistry([Crasher()])
    outcome = await registry.call(ToolCall("1", "crash", {}), ctx)
    assert outcome == ToolOutcome.error(
        "Tool 'crash' failed: ValueError: boom", reason="tool_crashed"
    )


class Registry:
    """A stand-in service (the process registry, the subagent spawner...)."""


def test_services_and_progress(tmp_path: Path) -> None:
    seen: list[ToolProgress] = []
    service = Registry()
    ctx = ToolContext.create(
        tmp_path, tmp_path / "spill", services={Registry: service}, progress=seen.append
    )
    assert ctx.service(Registry) is service
    with pytest.raises(LookupError, match="no Probe service"):
        ctx.service(Probe)
    ctx.for_call("c1", "terminal").report("output", "hi")
    assert seen == [ToolProgress("c1", "terminal", "output", "hi")]
    assert ctx.resolve("a/b") == tmp_path / "a/b"
    assert ctx.resolve("/abs") == Path("/abs")


def test_context_env_is_scrubbed(tmp_path: Path) -> None:
    ctx = ToolContext.create(
        tmp_path, tmp_path, environ={"PATH": "/bin", "ANTHROPIC_API_KEY": "sk-ant-secret"}
    )
    assert "ANTHROPIC_API_KEY" not in ctx.env and ctx.env["PATH"] == "/bin"
