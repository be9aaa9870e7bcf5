"""``search_files``: search file contents by regex, or file names by glob.

Pure Python, in a worker thread that checks for cancellation between files.
Version-control and cache directories (``.git``, ``node_modules``, ``.venv``...)
are skipped below the search root, binary files (a NUL byte in the first 8 KiB)
and files over 10 MB are skipped, and results stop at ``limit``.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import trio

from ..base import Tool, ToolKind, ToolOutcome
from ..context import ToolContext
from ..guard.gate import guard_read
from .fs import BINARY_SNIFF, display, looks_binary

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "__pycache__",
        "node_modules",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
MAX_FILE_BYTES = 10_000_000
MAX_LINE_CHARS = 300


class SearchFilesTool(Tool):
    name = "search_files"
    kind = ToolKind.READ_ONLY
    toolset = "file"
    description = (
        "Search files. target='content' (default) finds lines matching a regular expression "
        "(Python syntax) and returns 'path:line: text'; target='files' finds files whose name "
        "matches a glob such as '*.py' (a pattern without wildcards matches names containing "
        "it). file_glob restricts which files are searched. Skips .git, caches and binary "
        "files; results stop at limit."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "minLength": 1,
                "description": "Regex (content) or name glob (files).",
            },
            "target": {"type": "string", "enum": ["content", "files"], "default": "content"},
            "path": {
                "type": "string",
                "default": ".",
                "description": "Directory or file to search.",
            },
            "file_glob": {
                "type": "string",
                "description": "Only search files whose name matches this glob, e.g. '*.py'.",
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50},
            "ignore_case": {"type": "boolean", "default": False},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...] | None:
        return (cwd / Path(args.get("path", ".")).expanduser(),)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        root = ctx.resolve(args.get("path", "."))
        target = args.get("target", "content")
        if target == "content":
            refused = await guard_read(ctx, root, self.name, "search")
            if refused is not None:
                return refused
        policy = ctx.guard

        def readable(path: Path) -> bool:
            return policy.check_read(path).allowed

        return await trio.to_thread.run_sync(
            search,
            root,
            ctx.cwd,
            args["pattern"],
            target,
            args.get("file_glob"),
            int(args.get("limit", 50)),
            bool(args.get("ignore_case", False)),
            readable,
        )


def _files(root: Path, glob: str | None) -> Iterator[Path]:
    """Files under ``root`` in sorted order, pruning ``SKIP_DIRS`` below the root."""
    if root.is_file():
        if glob is None or _glob_match(root, root.parent, glob):
            yield root
        return
    for current, dirs, names in os.walk(root):
        trio.from_thread.check_cancelled()
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        base = Path(current)
        for name in sorted(names):
            path = base / name
            if glob is None or _glob_match(path, root, glob):
                yield path


def _glob_match(path: Path, root: Path, glob: str) -> bool:
    if "/" in glob:
        try:
            return fnmatch.fnmatch(str(path.relative_to(root)), glob)
        except ValueError:
            return False
    return fnmatch.fnmatch(path.name, glob)


def search(
    root: Path,
    cwd: Path,
    pattern: str,
    target: str,
    file_glob: str | None,
    limit: int,
    ignore_case: bool,
    readable: Callable[[Path], bool] = lambda _: True,
) -> ToolOutcome:
    """Run one search (blocking; checks for cancellation).

    ``readable`` is the path policy: a file it refuses is never opened (content).
    """
    if not root.exists():
        return ToolOutcome.error(f"Path not found: {root}")
    if target == "files":
        return _search_names(root, cwd, pattern, file_glob, limit, ignore_case)
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        return ToolOutcome.error(f"Invalid regular expression {pattern!r}: {exc}")
    return _search_content(root, cwd, regex, file_glob, limit, readable)


def _search_names(
    root: Path, cwd: Path, pattern: str, file_glob: str | None, limit: int, ignore_case: bool
) -> ToolOutcome:
    glob = pattern if any(ch in pattern for ch in "*?[") else f"*{pattern}*"
    if ignore_case:
        glob = glob.lower()
    found: list[str] = []
    more = False
    for path in _files(root, file_glob):
        name = path.name.lower() if ignore_case else path.name
        if fnmatch.fnmatchcase(name, glob):
            if len(found) >= limit:
                more = True
                break
            found.append(display(path, cwd))
    if not found:
        return ToolOutcome.ok(f"No files named like {pattern!r} under {root}.", matches=0)
    tail = f"\n[Stopped at limit={limit}; narrow the search or raise limit.]" if more else ""
    return ToolOutcome.ok("\n".join(found) + tail, matches=len(found), truncated=more)


def _search_content(
    root: Path,
    cwd: Path,
    regex: re.Pattern[str],
    file_glob: str | None,
    limit: int,
    readable: Callable[[Path], bool],
) -> ToolOutcome:
    found: list[str] = []
    searched = skipped = guarded = 0
    more = False
    for path in _files(root, file_glob):
        trio.from_thread.check_cancelled()
        if not readable(path):
            guarded += 1
            continue
        text = _text_of(path)
        if text is None:
            skipped += 1
            continue
        searched += 1
        shown = display(path, cwd)
        for number, line in enumerate(text.splitlines(), 1):
            if regex.search(line):
                if len(found) >= limit:
                    more = True
                    break
                if len(line) > MAX_LINE_CHARS:
                    line = line[:MAX_LINE_CHARS] + " ..."
                found.append(f"{shown}:{number}: {line}")
        if more:
            break
    skipped_note = f", {skipped} binary/large/unreadable skipped" if skipped else ""
    if guarded:
        skipped_note += f", {guarded} not searched: .env or credential files the agent never reads"
    if not found:
        return ToolOutcome.ok(
            f"No matches for /{regex.pattern}/ under {root} ({searched} files searched"
            f"{skipped_note}).",
            matches=0,
        )
    tail = f"\n[Stopped at limit={limit}; narrow the search or raise limit.]" if more else ""
    if guarded:
        tail += (
            f"\n[{guarded} .env or credential files were not searched: the agent never reads them.]"
        )
    return ToolOutcome.ok(
        "\n".join(found) + tail, matches=len(found), truncated=more, guarded=guarded
    )


def _text_of(path: Path) -> str | None:
    """The file's text, or ``None`` for binary, oversized or unreadable files."""
    try:
        if path.is_symlink() and not path.exists():
            return None
        if path.stat().st_size > MAX_FILE_BYTES or not path.is_file():
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if looks_binary(data[:BINARY_SNIFF]):
        return None
    return data.decode("utf-8", errors="replace")
