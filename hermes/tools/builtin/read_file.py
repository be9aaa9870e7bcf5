"""``read_file``: a window of a text file, with numbered lines (``    12|text``).

``offset`` is the first line (1-based), ``limit`` the number of lines. Long
lines are cut at 2,000 characters and the whole answer at 60,000, well under
the 100,000-character spill limit, so reading a spilled result never spills
again. The footer says how to continue when there is more.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from ..base import Tool, ToolKind, ToolOutcome
from ..context import ToolContext
from ..guard.gate import refusal
from ..guard.policy import PathPolicy, Ruling
from ..guard.reads import Stamp
from .fs import BINARY_SNIFF, check_regular_file, looks_binary

MAX_LINE_CHARS = 2_000
MAX_OUTPUT_CHARS = 60_000
COUNT_LIMIT_CHARS = 50_000_000
"""Past this much text after the window, the total line count is not computed."""


class ReadFileTool(Tool):
    name = "read_file"
    kind = ToolKind.READ_ONLY
    toolset = "file"
    description = (
        "Read a text file. Returns numbered lines as 'LINE|text'. Use offset (first line, "
        "1-based) and limit (number of lines) to page through large files; the footer says "
        "where to continue. Fails clearly for missing, binary and directory paths."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to read."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "default": 1,
                "description": "First line to return (1-based).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 5000,
                "default": 500,
                "description": "Number of lines to return.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...] | None:
        return (cwd / Path(args["path"]).expanduser(),)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(args["path"])
        offset = int(args.get("offset", 1))
        # The path guard and the read in one worker-thread hop (a hop each was ~2 % of a
        # busy daemon's loop).
        ruling, read = await trio.to_thread.run_sync(
            _guarded_read, ctx.guard, path, offset, int(args.get("limit", 500))
        )
        if read is None:
            return refusal(self.name, "read", ruling, str(path))
        real, stamp, outcome = read
        if not outcome.is_error:
            details = outcome.details
            total = details.get("lines")
            full = offset == 1 and total is not None and details.get("last", 0) >= total
            ctx.files.record_read(real, stamp, full=full or total == 0)
        return outcome


def _guarded_read(
    guard: PathPolicy, path: Path, offset: int, limit: int
) -> tuple[Ruling, tuple[str, Stamp | None, ToolOutcome] | None]:
    """The path guard's ruling, and the read if it allows it (blocking)."""
    ruling = guard.check_read(path)
    return ruling, _stamped_read(path, offset, limit) if ruling.allowed else None


def _stamped_read(path: Path, offset: int, limit: int) -> tuple[str, Stamp | None, ToolOutcome]:
    """The real path, its stamp taken *before* reading, and the answer (blocking)."""
    real = os.path.realpath(path)
    stamp = Stamp.of(real)
    return real, stamp, read_window(path, offset, limit)


def read_window(path: Path, offset: int, limit: int) -> ToolOutcome:
    """The numbered-lines answer for ``path`` (blocking; checks for cancellation)."""
    problem = check_regular_file(path)
    if problem:
        return ToolOutcome.error(problem)
    try:
        with open(path, "rb") as raw:
            head = raw.read(BINARY_SNIFF)
            if looks_binary(head):
                size = path.stat().st_size
                return ToolOutcome.error(
                    f"{path} is a binary file ({size:,} bytes); read_file only reads text"
                )
            raw.seek(0)
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
            return _window(path, text, offset, limit)
    except PermissionError:
        return ToolOutcome.error(f"Permission denied: {path}")
    except OSError as exc:
        return ToolOutcome.error(f"Cannot read {path}: {exc.strerror or exc}")


def _window(path: Path, lines: io.TextIOWrapper, offset: int, limit: int) -> ToolOutcome:
    out: list[str] = []
    size = 0
    last = offset - 1
    full = False
    total: int | None = 0
    scanned = 0
    for number, line in enumerate(lines, 1):
        total = number
        if number % 10_000 == 0:
            trio.from_thread.check_cancelled()
        if number < offset:
            continue
        if number < offset + limit and not full:
            body = line[:-2] if line.endswith("\r\n") else line.rstrip("\n")
            if len(body) > MAX_LINE_CHARS:
                body = body[:MAX_LINE_CHARS] + f"... [line cut: {len(body):,} characters]"
            entry = f"{number:>6}|{body}"
            if size + len(entry) > MAX_OUTPUT_CHARS and out:
                full = True
                continue
            out.append(entry)
            size += len(entry) + 1
            last = number
            continue
        scanned += len(line)
        if scanned > COUNT_LIMIT_CHARS:
            total = None
            break
    if total == 0:
        return ToolOutcome.ok(f"({path} is empty)", lines=0)
    if not out:
        return ToolOutcome.error(
            f"offset={offset} is past the end of {path}, which has {total:,} lines"
        )
    footer = ""
    if total is None or last < total:
        of_total = "" if total is None else f" of {total:,}"
        reason = " (output size limit)" if full else ""
        footer = (
            f"\n[Showing lines {offset:,}-{last:,}{of_total}{reason}. "
            f"Continue with offset={last + 1}.]"
        )
    return ToolOutcome.ok("\n".join(out) + footer, first=offset, last=last, lines=total)
