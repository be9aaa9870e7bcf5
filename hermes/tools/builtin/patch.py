"""``patch``: replace an exact piece of text in a file.

The old text must occur exactly once, unless ``replace_all`` is set; when it is
missing or ambiguous the file is left alone and the error says why (with the
lines where the ambiguous matches are, or where the first line of the old text
appears with different surroundings). The answer shows a small unified diff.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from ..base import Tool, ToolKind, ToolOutcome
from ..checkpoint.service import checkpoint_before_write
from ..context import ToolContext
from ..guard.gate import guard_write
from .fs import check_regular_file, looks_binary

MAX_DIFF_CHARS = 4_000


class PatchTool(Tool):
    name = "patch"
    kind = ToolKind.WRITE
    toolset = "file"
    description = (
        "Edit a file by replacing an exact string. old_string must match the file exactly "
        "(whitespace and indentation included) and occur once; include enough surrounding "
        "lines to make it unique, or set replace_all to replace every occurrence. Read the "
        "file first. Returns a diff of the change."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to edit."},
            "old_string": {
                "type": "string",
                "minLength": 1,
                "description": "Exact text to replace.",
            },
            "new_string": {"type": "string", "description": "Replacement text."},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence instead of requiring exactly one.",
            },
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...] | None:
        return (cwd / Path(args["path"]).expanduser(),)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(args["path"])
        refused = await guard_write(ctx, path, self.name, whole=False)
        if refused is not None:
            return refused
        await checkpoint_before_write(ctx, path)

        def edit() -> ToolOutcome:
            outcome = patch_file(
                path, args["old_string"], args["new_string"], bool(args.get("replace_all", False))
            )
            if not outcome.is_error:
                ctx.files.record_write(path, full=False)
            return outcome

        return await trio.to_thread.run_sync(edit)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _occurrences(text: str, needle: str) -> list[int]:
    found: list[int] = []
    start = text.find(needle)
    while start >= 0:
        found.append(start)
        start = text.find(needle, start + len(needle))
    return found


def _near_misses(text: str, old: str) -> str:
    first = next((line.strip() for line in old.splitlines() if line.strip()), "")
    if not first:
        return ""
    lines = [n for n, line in enumerate(text.splitlines(), 1) if first in line][:5]
    if not lines:
        return ""
    where = ", ".join(str(n) for n in lines)
    return f" Its first line appears at line(s) {where}, with different surrounding text."


def patch_file(path: Path, old: str, new: str, replace_all: bool) -> ToolOutcome:
    """Replace ``old`` by ``new`` in ``path`` (blocking)."""
    problem = check_regular_file(path)
    if problem:
        return ToolOutcome.error(problem + ". Nothing was changed.")
    if old == new:
        return ToolOutcome.error("old_string and new_string are identical; nothing to change.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        return ToolOutcome.error(f"Cannot read {path}: {exc.strerror or exc}")
    if looks_binary(data[:8192]):
        return ToolOutcome.error(f"{path} is a binary file; patch only edits text.")
    text = data.decode("utf-8", errors="surrogateescape")
    hits = _occurrences(text, old)
    if not hits:
        return ToolOutcome.error(
            f"old_string was not found in {path}. Nothing was changed. It must match exactly, "
            "including whitespace and indentation; read the file again and copy the text."
            + _near_misses(text, old)
        )
    lines = [_line_of(text, i) for i in hits]
    if len(hits) > 1 and not replace_all:
        shown = ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
        return ToolOutcome.error(
            f"old_string is ambiguous: found {len(hits)} times in {path} (lines {shown}). "
            "Nothing was changed. Include more surrounding text to make it unique, or set "
            "replace_all=true to replace every occurrence."
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    try:
        path.write_bytes(updated.encode("utf-8", errors="surrogateescape"))
    except OSError as exc:
        return ToolOutcome.error(f"Cannot write {path}: {exc.strerror or exc}")
    diff = "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True),
            updated.splitlines(keepends=True),
            fromfile=str(path),
            tofile=str(path),
            n=2,
        )
    )
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + f"\n... [diff cut: {len(diff):,} characters]"
    count = len(hits)
    at = ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
    noun = "occurrence" if count == 1 else "occurrences"
    return ToolOutcome.ok(
        f"Patched {path}: replaced {count} {noun} (line {at}).\n{diff}",
        path=str(path),
        replacements=count,
        success=True,
    )
