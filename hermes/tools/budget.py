"""Output budgets: results too large for the transcript are saved to a file.

A result over ``per_result`` characters (Hermes: 100,000) is written to
``<spill_dir>/<call id>-<tool>.txt`` and replaced by a preview (head and tail)
plus the path, so the model can page through it with ``read_file``. When one
batch's results together exceed ``per_batch`` (200,000), the largest are
spilled the same way until the rest fit.

``read_file`` caps its own output well below ``per_result``, so reading a
spilled file never spills again.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs


@attrs.frozen(slots=True)
class OutputBudget:
    per_result: int = 100_000
    per_batch: int = 200_000
    preview_head: int = 1_200
    preview_tail: int = 600


def spill_name(call_id: str, tool: str) -> str:
    """A safe file name for one call's full output."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{call_id}-{tool}")[:120]
    return f"{safe or 'result'}.txt"


def worth_spilling(text: str, budget: OutputBudget) -> bool:
    """True when a preview would be clearly shorter than ``text`` itself."""
    return len(text) > 2 * (budget.preview_head + budget.preview_tail) + 500


def preview(text: str, path: Path, budget: OutputBudget) -> str:
    """What the model sees instead of ``text``: size, where the rest is, head and tail."""
    head = text[: budget.preview_head]
    tail = text[-budget.preview_tail :] if len(text) > budget.preview_head else ""
    lines = text.count("\n") + 1
    return (
        f"[Output too large for the conversation: {len(text):,} characters, {lines:,} lines. "
        f"The full output is saved to {path} ; read it with read_file (offset/limit) or search "
        f"it with search_files.]\n"
        f"--- first {len(head):,} characters ---\n{head}\n"
        + (f"--- last {len(tail):,} characters ---\n{tail}\n" if tail else "")
        + "--- end of preview ---"
    )


def spill(
    text: str, directory: Path, call_id: str, tool: str, budget: OutputBudget
) -> tuple[str, Path | None]:
    """Save ``text``; return its preview and the file. Blocking: run it in a worker thread.

    If the file cannot be written, the text is truncated in place instead and
    the preview says so: a large result must never reach the model whole.
    """
    path = directory / spill_name(call_id, tool)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="replace")
    except OSError as exc:
        keep = budget.per_result // 2
        note = (
            f"[Output too large ({len(text):,} characters) and could not be saved "
            f"({type(exc).__name__}: {exc}); showing the first {keep:,} characters.]\n"
        )
        return note + text[:keep], None
    return preview(text, path, budget), path
