"""``write_file``: write a whole file (UTF-8), creating parent directories."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from hermes.procgroup import user_umask

from ..base import Tool, ToolKind, ToolOutcome
from ..checkpoint.service import checkpoint_before_write
from ..context import ToolContext
from ..guard.gate import guard_write


class WriteFileTool(Tool):
    name = "write_file"
    kind = ToolKind.WRITE
    toolset = "file"
    description = (
        "Write content to a file, replacing it if it exists and creating missing parent "
        "directories. Reports the bytes written. For small changes to an existing file "
        "prefer patch."
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to write."},
            "content": {"type": "string", "description": "The complete new content."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def touched_paths(self, args: Mapping[str, Any], cwd: Path) -> tuple[Path, ...] | None:
        return (cwd / Path(args["path"]).expanduser(),)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(args["path"])
        refused = await guard_write(ctx, path, self.name, whole=True)
        if refused is not None:
            return refused
        await checkpoint_before_write(ctx, path)

        def write() -> ToolOutcome:
            outcome = write_text(path, args["content"])
            if not outcome.is_error:
                ctx.files.record_write(path, full=True)
            return outcome

        return await trio.to_thread.run_sync(write)


def write_text(path: Path, content: str) -> ToolOutcome:
    """Write ``content`` exactly (no newline translation); blocking."""
    data = content.encode("utf-8", errors="surrogatepass")
    if path.is_dir():
        return ToolOutcome.error(f"{path} is a directory; give a file path. Nothing was written.")
    existed = path.exists()
    mask = user_umask()
    try:
        missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
        for made in missing:  # as the user's shell would have made them, not 0700
            os.chmod(made, 0o777 & ~mask)
        with open(path, "wb") as f:
            if not existed:
                os.fchmod(f.fileno(), 0o666 & ~mask)
            f.write(data)
    except FileExistsError:
        return ToolOutcome.error(
            f"Cannot create {path}: a parent path exists and is a file. Nothing was written."
        )
    except NotADirectoryError:
        return ToolOutcome.error(
            f"Cannot create {path}: a parent path is a file. Nothing was written."
        )
    except PermissionError:
        return ToolOutcome.error(f"Permission denied: {path}. Nothing was written.")
    except OSError as exc:
        return ToolOutcome.error(f"Cannot write {path}: {exc.strerror or exc}")
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    verb = "overwrote" if existed else "created"
    return ToolOutcome.ok(
        f"Wrote {len(data):,} bytes ({lines:,} lines) to {path} ({verb}).",
        path=str(path),
        bytes_written=len(data),
        created=not existed,
    )
