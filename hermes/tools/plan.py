"""Batch planning: which calls of a batch may run together.

``plan_batch`` is a pure function of the calls, the registry and the working
directory. It resolves every call (unknown tools and bad arguments are
*rejected* with their error result and never run), folds identical calls into
the first one (*duplicates*), and cuts the rest, in call order, into *stages*:
the calls of a stage run concurrently, stages run one after another.

A call joins the current stage unless it conflicts with a call already in it:

- ``OTHER`` tools (the terminal, subagents...) always run alone;
- a ``WRITE`` whose paths are unknown runs alone;
- two writes conflict when their paths overlap (equal, or one inside the other);
- a read conflicts with a write when their paths overlap, or when the read's
  paths are unknown;
- reads never conflict with reads.

Since a conflicting call always starts a new stage, any two calls that could
observe each other run in the order the model asked for them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import attrs

from .base import ToolCall, ToolKind, ToolOutcome
from .registry import PreparedCall, ToolRegistry


@attrs.frozen(slots=True)
class _Claim:
    index: int
    kind: ToolKind
    paths: tuple[str, ...] | None


@attrs.frozen(slots=True)
class BatchPlan:
    calls: tuple[ToolCall, ...]
    prepared: dict[int, PreparedCall]
    rejected: dict[int, ToolOutcome]
    """Calls that will not run, with the error result the model gets."""
    duplicates: dict[int, int]
    """Call index -> index of the identical earlier call whose result it shares."""
    stages: tuple[tuple[int, ...], ...]
    """Call indices; each stage runs concurrently, stages in order."""


def paths_overlap(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` are the same path or one contains the other."""
    if a == b:
        return True
    return a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def _dedupe_key(prepared: PreparedCall) -> str:
    args = json.dumps(prepared.args, sort_keys=True, default=repr)
    return f"{prepared.call.name}\0{args}"


def _claim(index: int, prepared: PreparedCall, cwd: Path) -> _Claim:
    tool = prepared.tool
    try:
        paths = tool.touched_paths(prepared.args, cwd)
    except Exception:  # a buggy path function must not break planning: assume unknown
        paths = None
    if paths is None:
        return _Claim(index, tool.kind, None)
    # realpath: two spellings (or a symlink) of one file must conflict. It stats a few paths.
    normalized = tuple(os.path.realpath(cwd / p) for p in paths)
    return _Claim(index, tool.kind, normalized)


def _conflict(a: _Claim, b: _Claim) -> bool:
    if a.kind is ToolKind.READ_ONLY and b.kind is ToolKind.READ_ONLY:
        return False
    if a.paths is None or b.paths is None:
        return True
    return any(paths_overlap(x, y) for x in a.paths for y in b.paths)


def _alone(claim: _Claim) -> bool:
    return claim.kind is ToolKind.OTHER or (claim.kind is ToolKind.WRITE and claim.paths is None)


def plan_batch(calls: Sequence[ToolCall], registry: ToolRegistry, cwd: Path) -> BatchPlan:
    """Resolve, dedupe and stage ``calls`` (see the module docstring)."""
    prepared: dict[int, PreparedCall] = {}
    rejected: dict[int, ToolOutcome] = {}
    duplicates: dict[int, int] = {}
    first_of: dict[str, int] = {}
    claims: list[_Claim] = []
    for index, call in enumerate(calls):
        result = registry.prepare(call)
        if isinstance(result, ToolOutcome):
            rejected[index] = result
            continue
        key = _dedupe_key(result)
        if key in first_of:
            duplicates[index] = first_of[key]
            continue
        first_of[key] = index
        prepared[index] = result
        claims.append(_claim(index, result, cwd))

    stages: list[tuple[int, ...]] = []
    current: list[_Claim] = []
    for claim in claims:
        if _alone(claim) or any(_conflict(claim, other) for other in current):
            if current:
                stages.append(tuple(c.index for c in current))
            current = [claim]
        else:
            current.append(claim)
        if _alone(claim):
            stages.append((claim.index,))
            current = []
    if current:
        stages.append(tuple(c.index for c in current))
    return BatchPlan(tuple(calls), prepared, rejected, duplicates, tuple(stages))
