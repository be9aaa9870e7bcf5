"""read_file, write_file, patch and search_files on real files under tmp_path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.tools import ToolCall, ToolContext, ToolOutcome, ToolRegistry


def text(path: Path) -> str:
    return path.read_text()


async def use(registry: ToolRegistry, ctx: ToolContext, tool: str, **args: Any) -> ToolOutcome:
    with trio.fail_after(10):
        return await registry.call(ToolCall("f1", tool, args), ctx)


# -- read_file ---------------------------------------------------------------------------


@pytest.fixture
def numbers(workdir: Path) -> Path:
    path = workdir / "numbers.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 21)))
    return path


async def test_read_whole_file(registry: ToolRegistry, ctx: ToolContext, numbers: Path) -> None:
    outcome = await use(registry, ctx, "read_file", path="numbers.txt")
    lines = outcome.content.splitlines()
    assert not outcome.is_error
    assert lines[0] == "     1|line 1" and lines[-1] == "    20|line 20"
    assert len(lines) == 20  # complete: no footer


async def test_read_window_with_footer(
    registry: ToolRegistry, ctx: ToolContext, numbers: Path
) -> None:
    outcome = await use(registry, ctx, "read_file", path=str(numbers), offset=12, limit=3)
    assert outcome.content == (
        "    12|line 12\n    13|line 13\n    14|line 14\n"
        "[Showing lines 12-14 of 20. Continue with offset=15.]"
    )
    assert outcome.details == {"first": 12, "last": 14, "lines": 20}
    tail = await use(registry, ctx, "read_file", path="numbers.txt", offset=19, limit=10)
    assert tail.content == "    19|line 19\n    20|line 20"


async def test_read_errors(registry: ToolRegistry, ctx: ToolContext, workdir: Path) -> None:
    (workdir / "notes.txt").write_text("x\n")
    (workdir / "blob.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 10)
    (workdir / "empty.txt").write_text("")
    os.mkfifo(workdir / "fifo")

    missing = await use(registry, ctx, "read_file", path="note.txt")
    assert missing.is_error and "File not found" in missing.content
    assert "notes.txt" in missing.content  # the near miss
    binary = await use(registry, ctx, "read_file", path="blob.bin")
    assert binary.is_error and "binary file (70 bytes)" in binary.content
    directory = await use(registry, ctx, "read_file", path=".")
    assert directory.is_error and "is a directory" in directory.content
    fifo = await use(registry, ctx, "read_file", path="fifo")
    assert fifo.is_error and "not a regular file" in fifo.content
    empty = await use(registry, ctx, "read_file", path="empty.txt")
    assert not empty.is_error and "is empty" in empty.content
    past = await use(registry, ctx, "read_file", path="notes.txt", offset=5)
    assert past.is_error and "past the end" in past.content and "1 lines" in past.content
    bad = await use(registry, ctx, "read_file", path="notes.txt", offset=0)
    assert bad.is_error and "field 'offset' must be >= 1" in bad.content


async def test_read_bounds_long_lines_and_output(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "wide.txt").write_text("y" * 10_000 + "\nshort\n")
    wide = await use(registry, ctx, "read_file", path="wide.txt")
    assert "[line cut: 10,000 characters]" in wide.content and "     2|short" in wide.content
    (workdir / "big.txt").write_text(("z" * 1_000 + "\n") * 200)
    big = await use(registry, ctx, "read_file", path="big.txt", limit=200)
    assert len(big.content) < 65_000
    assert "(output size limit)" in big.content and "Continue with offset=" in big.content


async def test_read_keeps_crlf_out_of_the_text(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "dos.txt").write_bytes(b"a\r\nb\r\n")
    outcome = await use(registry, ctx, "read_file", path="dos.txt")
    assert outcome.content == "     1|a\n     2|b"


# -- write_file --------------------------------------------------------------------------


async def test_write_creates_parents_and_reports_bytes(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    outcome = await use(registry, ctx, "write_file", path="a/b/c.txt", content="héllo\nworld")
    target = workdir / "a/b/c.txt"
    assert target.read_text() == "héllo\nworld"
    assert outcome.content == f"Wrote 12 bytes (2 lines) to {target} (created)."
    assert outcome.details["bytes_written"] == 12 and outcome.details["created"]
    again = await use(registry, ctx, "write_file", path="a/b/c.txt", content="")
    assert "(overwrote)" in again.content and target.read_text() == ""


async def test_write_errors(registry: ToolRegistry, ctx: ToolContext, workdir: Path) -> None:
    (workdir / "dir").mkdir()
    (workdir / "file").write_text("x")
    directory = await use(registry, ctx, "write_file", path="dir", content="x")
    assert directory.is_error and "is a directory" in directory.content
    under_file = await use(registry, ctx, "write_file", path="file/inner.txt", content="x")
    assert under_file.is_error and "Nothing was written" in under_file.content
    missing = await use(registry, ctx, "write_file", path="x.txt")
    assert missing.is_error and "missing required field 'content'" in missing.content


# -- patch -------------------------------------------------------------------------------


@pytest.fixture
def source(workdir: Path) -> Path:
    path = workdir / "app.py"
    path.write_text("def f():\n    return 1\n\n\ndef g():\n    return 1\n")
    return path


async def test_patch_replaces_a_unique_string(
    registry: ToolRegistry, ctx: ToolContext, source: Path
) -> None:
    outcome = await use(
        registry,
        ctx,
        "patch",
        path="app.py",
        old_string="def g():\n    return 1",
        new_string="def g():\n    return 2",
    )
    assert not outcome.is_error
    assert text(source).endswith("def g():\n    return 2\n")
    assert outcome.content.startswith(f"Patched {source}: replaced 1 occurrence (line 5).")
    assert "-    return 1\n+    return 2" in outcome.content
    assert outcome.details["success"] is True


async def test_patch_missing_and_ambiguous(
    registry: ToolRegistry, ctx: ToolContext, source: Path
) -> None:
    before = text(source)
    missing = await use(
        registry, ctx, "patch", path="app.py", old_string="return 3", new_string="x"
    )
    assert missing.is_error and "not found" in missing.content
    assert "Nothing was changed" in missing.content
    near = await use(
        registry,
        ctx,
        "patch",
        path="app.py",
        old_string="def f():\n  return 1",
        new_string="x",
    )
    assert near.is_error and "first line appears at line(s) 1" in near.content
    ambiguous = await use(
        registry, ctx, "patch", path="app.py", old_string="return 1", new_string="return 9"
    )
    assert ambiguous.is_error
    assert "found 2 times" in ambiguous.content and "lines 2, 6" in ambiguous.content
    assert "replace_all" in ambiguous.content
    assert text(source) == before
    every = await use(
        registry,
        ctx,
        "patch",
        path="app.py",
        old_string="return 1",
        new_string="return 9",
        replace_all="true",
    )
    assert not every.is_error and "replaced 2 occurrences (line 2, 6)" in every.content
    assert text(source).count("return 9") == 2


async def test_patch_other_errors(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path, source: Path
) -> None:
    same = await use(registry, ctx, "patch", path="app.py", old_string="f", new_string="f")
    assert same.is_error and "identical" in same.content
    nofile = await use(registry, ctx, "patch", path="nope.py", old_string="a", new_string="b")
    assert nofile.is_error and "File not found" in nofile.content
    empty = await use(registry, ctx, "patch", path="app.py", old_string="", new_string="b")
    assert empty.is_error and "field 'old_string' must not be empty" in empty.content
    (workdir / "b.bin").write_bytes(b"a\x00b")
    binary = await use(registry, ctx, "patch", path="b.bin", old_string="a", new_string="c")
    assert binary.is_error and "binary" in binary.content


async def test_patch_keeps_crlf(registry: ToolRegistry, ctx: ToolContext, workdir: Path) -> None:
    path = workdir / "dos.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    await use(registry, ctx, "patch", path="dos.txt", old_string="two", new_string="2")
    assert path.read_bytes() == b"one\r\n2\r\n"


# -- search_files ------------------------------------------------------------------------


@pytest.fixture
def tree(workdir: Path) -> Path:
    (workdir / "src").mkdir()
    (workdir / "src/main.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (workdir / "src/util.py").write_text("def helper():\n    return 'Main'\n")
    (workdir / "README.md").write_text("# main project\n")
    (workdir / ".git").mkdir()
    (workdir / ".git/config").write_text("main = true\n")
    (workdir / "src/image.png").write_bytes(b"main\x00\x01")
    return workdir


async def test_content_search(registry: ToolRegistry, ctx: ToolContext, tree: Path) -> None:
    outcome = await use(registry, ctx, "search_files", pattern=r"def \w+\(")
    assert outcome.content.splitlines() == [
        "src/main.py:3: def main():",
        "src/util.py:1: def helper():",
    ]
    only_md = await use(registry, ctx, "search_files", pattern="main", file_glob="*.md")
    assert only_md.content == "README.md:1: # main project"
    folded = await use(registry, ctx, "search_files", pattern="main", path="src", ignore_case=True)
    lines = folded.content.splitlines()
    assert "src/main.py:3: def main():" in lines and "src/util.py:2:     return 'Main'" in lines
    assert not any(".git" in line or "image.png" in line for line in lines)


async def test_name_search(registry: ToolRegistry, ctx: ToolContext, tree: Path) -> None:
    globbed = await use(registry, ctx, "search_files", pattern="*.py", target="files")
    assert globbed.content.splitlines() == ["src/main.py", "src/util.py"]
    plain = await use(registry, ctx, "search_files", pattern="util", target="files")
    assert plain.content == "src/util.py"
    none = await use(registry, ctx, "search_files", pattern="*.rs", target="files")
    assert not none.is_error and "No files" in none.content


async def test_search_limits_and_errors(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "many.txt").write_text("hit\n" * 100)
    limited = await use(registry, ctx, "search_files", pattern="hit", limit=5)
    assert len(limited.content.splitlines()) == 6
    assert "Stopped at limit=5" in limited.content and limited.details["truncated"]
    bad = await use(registry, ctx, "search_files", pattern="(unclosed")
    assert bad.is_error and "Invalid regular expression" in bad.content
    missing = await use(registry, ctx, "search_files", pattern="x", path="nowhere")
    assert missing.is_error and "Path not found" in missing.content
    nothing = await use(registry, ctx, "search_files", pattern="absent-text")
    assert not nothing.is_error and "No matches" in nothing.content
    wrong_target = await use(registry, ctx, "search_files", pattern="x", target="dirs")
    assert wrong_target.is_error and "must be one of" in wrong_target.content


async def test_search_a_single_file(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path
) -> None:
    (workdir / "one.txt").write_text("alpha\nbeta\n")
    outcome = await use(registry, ctx, "search_files", pattern="^b", path="one.txt")
    assert outcome.content == "one.txt:2: beta"
