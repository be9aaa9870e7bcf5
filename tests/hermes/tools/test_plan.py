"""Batch planning: stages, dedupe, rejection, path overlap."""

from __future__ import annotations

from pathlib import Path

from hermes.tools import ToolCall, ToolKind, ToolRegistry, builtin_tools, plan_batch
from hermes.tools.plan import paths_overlap

from .helpers import Probe, Sleeper


def registry() -> ToolRegistry:
    probe = Probe()
    return ToolRegistry(
        [
            *builtin_tools(),
            Sleeper("read", ToolKind.READ_ONLY, probe),
            Sleeper("write", ToolKind.WRITE, probe),
            Sleeper("other", ToolKind.OTHER, probe),
        ]
    )


def calls(*specs: tuple[str, dict[str, object]]) -> list[ToolCall]:
    return [ToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(specs)]


def test_reads_share_a_stage(tmp_path: Path) -> None:
    plan = plan_batch(
        calls(
            ("read_file", {"path": "a"}),
            ("search_files", {"pattern": "x"}),
            ("read", {"tag": "r"}),
            ("read_file", {"path": "a", "offset": 5}),
        ),
        registry(),
        tmp_path,
    )
    assert plan.stages == ((0, 1, 2, 3),)


def test_writes_in_parallel_only_without_overlap(tmp_path: Path) -> None:
    plan = plan_batch(
        calls(
            ("write_file", {"path": "a.txt", "content": "1"}),
            ("write_file", {"path": "b.txt", "content": "2"}),
            ("patch", {"path": "sub/c.txt", "old_string": "x", "new_string": "y"}),
            ("patch", {"path": "a.txt", "old_string": "1", "new_string": "3"}),
            ("write", {"tag": "w", "path": "sub"}),
        ),
        registry(),
        tmp_path,
    )
    assert plan.stages == ((0, 1, 2), (3, 4))


def test_a_read_waits_for_an_overlapping_write(tmp_path: Path) -> None:
    plan = plan_batch(
        calls(
            ("write_file", {"path": "a.txt", "content": "1"}),
            ("read_file", {"path": "b.txt"}),
            ("read_file", {"path": "./a.txt"}),
            ("search_files", {"pattern": "1"}),
        ),
        registry(),
        tmp_path,
    )
    assert plan.stages == ((0, 1), (2, 3))


def test_unknown_paths(tmp_path: Path) -> None:
    reg = registry()
    # a read without paths never shares with a write; a write without paths runs alone
    unknown_read = Sleeper("blind_read", ToolKind.READ_ONLY, Probe(), paths=False)
    unknown_write = Sleeper("blind_write", ToolKind.WRITE, Probe(), paths=False)
    reg.register(unknown_read)
    reg.register(unknown_write)
    plan = plan_batch(
        calls(
            ("write_file", {"path": "a.txt", "content": "1"}),
            ("blind_read", {"tag": "r"}),
            ("read_file", {"path": "b.txt"}),
            ("blind_write", {"tag": "w"}),
            ("read_file", {"path": "c.txt"}),
        ),
        reg,
        tmp_path,
    )
    assert plan.stages == ((0,), (1, 2), (3,), (4,))


def test_other_tools_run_alone_in_order(tmp_path: Path) -> None:
    plan = plan_batch(
        calls(
            ("read_file", {"path": "a"}),
            ("terminal", {"command": "ls"}),
            ("read_file", {"path": "b"}),
            ("read_file", {"path": "c"}),
            ("other", {"tag": "x"}),
            ("terminal", {"command": "pwd"}),
        ),
        registry(),
        tmp_path,
    )
    assert plan.stages == ((0,), (1,), (2, 3), (4,), (5,))


def test_duplicates_and_rejections(tmp_path: Path) -> None:
    plan = plan_batch(
        calls(
            ("read_file", {"path": "a", "limit": 10}),
            ("nope", {}),
            ("read_file", {"limit": "10", "path": "a"}),  # identical after coercion
            ("read_file", {}),
            ("terminal", {"command": "date"}),
            ("terminal", {"command": "date"}),
        ),
        registry(),
        tmp_path,
    )
    assert plan.duplicates == {2: 0, 5: 4}
    assert set(plan.rejected) == {1, 3}
    assert plan.stages == ((0,), (4,))


def test_symlinked_paths_conflict(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    plan = plan_batch(
        calls(
            ("write_file", {"path": "real/a.txt", "content": "1"}),
            ("write_file", {"path": "link/a.txt", "content": "2"}),
        ),
        registry(),
        tmp_path,
    )
    assert plan.stages == ((0,), (1,))


def test_paths_overlap() -> None:
    assert paths_overlap("/a/b", "/a/b")
    assert paths_overlap("/a", "/a/b/c")
    assert paths_overlap("/a/b/c", "/a")
    assert not paths_overlap("/a/b", "/a/bc")
    assert not paths_overlap("/a/b", "/a/c")
    assert paths_overlap("/", "/x")
