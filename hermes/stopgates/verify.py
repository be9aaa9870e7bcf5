"""Verify-on-stop (seed #228, off by default): edited code needs a passing check.

Read from the turn's own messages: the files its ``write_file`` and ``patch``
calls edited (prose such as ``.md`` or ``LICENSE`` left out: nothing to run),
and the ``terminal`` commands after the last edit. Evidence is one of those
commands that looks like a check (tests, a linter, a type checker, a build)
and exited 0. An answer without it is sent back once with the edited paths.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from hermes.model import Message, ToolResultBlock

EDIT_TOOLS = frozenset({"write_file", "patch"})
PROSE_SUFFIXES = frozenset(
    {".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".org", ".log", ".csv", ".tsv"}
)
PROSE_NAMES = frozenset({"license", "licence", "notice", "authors", "changelog", "codeowners"})
CHECK = re.compile(
    r"\b(pytest|test|tests|unittest|tox|nox|make|ruff|flake8|pylint|mypy|pyright|tsc|eslint|"
    r"jest|vitest|mocha|cargo|go|npm|pnpm|yarn|gradle|mvn|ctest|check|lint|build|verify)\b"
)
MAX_PATHS = 8


def needs_proof(path: str) -> bool:
    p = PurePath(path)
    if p.suffix.lower() in PROSE_SUFFIXES:
        return False
    return not (not p.suffix and p.name.lower() in PROSE_NAMES)


def _results(messages: Sequence[Message]) -> dict[str, ToolResultBlock]:
    return {
        block.tool_use_id: block
        for m in messages
        if m.role == "user"
        for block in m.content
        if isinstance(block, ToolResultBlock)
    }


def edited_paths(messages: Sequence[Message]) -> list[str]:
    """The code paths the turn's ``write_file``/``patch`` calls edited, sorted."""
    results = _results(messages)
    edited = set()
    for message in messages:
        if message.role != "assistant":
            continue
        for use in message.tool_uses():
            result = results.get(use.id)
            path = use.input.get("path") if isinstance(use.input, dict) else None
            ok = result is not None and not result.is_error
            if use.name in EDIT_TOOLS and isinstance(path, str) and ok and needs_proof(path):
                edited.add(path)
    return sorted(edited)


def unverified_edits(messages: Sequence[Message]) -> list[str]:
    """The code paths the turn edited with no passing check after the last edit."""
    results = _results(messages)
    edited: list[str] = []
    verified = False
    for message in messages:
        if message.role != "assistant":
            continue
        for use in message.tool_uses():
            result = results.get(use.id)
            failed = result is None or result.is_error
            path = use.input.get("path") if isinstance(use.input, dict) else None
            if use.name in EDIT_TOOLS and isinstance(path, str) and not failed:
                if needs_proof(path):
                    edited.append(path)
                    verified = False
            elif use.name == "terminal" and edited and not failed:
                command = use.input.get("command") if isinstance(use.input, dict) else None
                if isinstance(command, str) and CHECK.search(command):
                    verified = True
    return [] if verified else sorted(set(edited))


def nudge(paths: Sequence[str]) -> str:
    shown = "\n".join(f"- {p}" for p in paths[:MAX_PATHS])
    more = f"\n- ... and {len(paths) - MAX_PATHS} more" if len(paths) > MAX_PATHS else ""
    return (
        "[System: you edited code in this turn, but no passing check (tests, a linter, a "
        f"type checker, a build) ran after the last edit.\nChanged paths:\n{shown}{more}\n"
        "Run the relevant check now, read any failure, fix it and say what passed. If it "
        "cannot be verified, say what blocks it instead of claiming it works.]"
    )
