"""How a task ends: ``TaskStatus``, ``TaskResult``, the summary budget, the text the parent reads.

Status mapping (Hermes' ``exit_reason`` plus our supervisor's verdicts):

| child turn / supervisor | status |
|---|---|
| completed with a non-empty answer | ``completed`` |
| ...whose output still misses the schema after the retry | ``completed``, ``schema_valid`` false |
| the iteration cap, with the final summary it was still asked for | ``completed``, ``truncated`` |
| no answer, failed, halted, unknown tools | ``failed`` |
| interrupted, cancelled, stopped by its owner or a stop of the parent | ``interrupted`` |
| cancelled by the supervisor for lack of progress | ``stalled`` |
| over its wall-clock cap | ``timed_out`` |

Summaries are capped at ``min(max_summary_chars, remaining context x chars
per token / 2 / N)``, never below ``summary_floor``. A longer one keeps 75 %
head and 25 % tail; the full text is saved to a file the parent can read.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import trio

from hermes.model.types import Usage

from .config import SubagentConfig


class TaskStatus(enum.Enum):
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    STALLED = "stalled"
    TIMED_OUT = "timed_out"


@attrs.frozen(slots=True, kw_only=True)
class TaskResult:
    """One child's end, as the parent gets it."""

    subagent_id: str
    goal: str
    status: TaskStatus
    summary: str
    """The child's final answer (capped; see ``full_text_path``)."""
    detail: str = ""
    session_id: str | None = None
    usage: Usage = attrs.field(factory=Usage)
    duration: float = 0.0
    iterations: int = 0
    tool_trace: tuple[str, ...] = ()
    tool_calls: int = 0
    output: Any = None
    """The parsed JSON answer when an output schema was asked for and it fit."""
    schema_valid: bool | None = None
    """Whether a completed answer fit the requested schema (None: no schema, or unchecked)."""
    truncated: bool = False
    """The child reached its step cap: its summary was asked for early and may be partial."""
    full_text_path: str | None = None
    """Where the whole summary went when it was over the cap."""
    handed_over: tuple[str, ...] = ()
    """Background processes the child handed to the parent: still running, the parent's."""


@attrs.frozen(slots=True, kw_only=True)
class BatchResult:
    """Every task of one delegation, in the order they were given."""

    delegation_id: str
    background: bool
    results: tuple[TaskResult, ...]
    duration: float

    @property
    def statuses(self) -> tuple[str, ...]:
        return tuple(r.status.value for r in self.results)


@attrs.frozen(slots=True)
class DelegationStarted:
    """A background delegation's answer: its id, at once."""

    delegation_id: str
    subagent_ids: tuple[str, ...]
    queued: int


def summary_cap(config: SubagentConfig, remaining_tokens: int, tasks: int) -> int:
    """Characters each summary may keep: min(max, half the room / N), at least the floor."""
    share = remaining_tokens * config.chars_per_token // 2 // max(1, tasks)
    return max(config.summary_floor, min(config.max_summary_chars, share))


async def cap_summary(text: str, cap: int, spill_to: Path) -> tuple[str, str | None]:
    """``text`` within ``cap`` characters (head and tail); the full text saved if cut."""
    if len(text) <= cap:
        return text, None
    head = cap * 3 // 4
    tail = cap - head
    path = trio.Path(spill_to)
    await path.parent.mkdir(parents=True, exist_ok=True)
    await path.write_text(text, encoding="utf-8")
    omitted = len(text) - head - tail
    lines_before = text[: len(text) - tail].count("\n") + 1
    note = (
        f"\n\n[... {omitted} characters of the summary omitted; the full text "
        f"({len(text)} characters) is in {spill_to}: read it with read_file "
        f"(the tail starts at offset={lines_before})]\n\n"
    )
    return text[:head] + note + text[-tail:], str(spill_to)


def _usage_line(usage: Usage) -> str:
    return (
        f"tokens: {usage.prompt_tokens} in ({usage.cache_read_input_tokens} cached), "
        f"{usage.output_tokens} out"
    )


def _trace_line(trace: Sequence[str], calls: int) -> str:
    if not trace:
        return "tools: none"
    counts: dict[str, int] = {}
    for entry in trace:
        counts[entry] = counts.get(entry, 0) + 1
    shown = ", ".join(f"{k} x{n}" if n > 1 else k for k, n in counts.items())
    more = f" (+{calls - len(trace)} more)" if calls > len(trace) else ""
    return f"tools: {shown}{more}"


def format_task(index: int, result: TaskResult) -> str:
    flags = "".join(
        [
            " (truncated)" if result.truncated else "",
            " (schema_valid: false)" if result.schema_valid is False else "",
        ]
    )
    head = (
        f"## Task {index} [{result.subagent_id}]: {result.status.value}{flags} in "
        f"{result.duration:.1f}s, {result.iterations} step(s); "
        f"{_trace_line(result.tool_trace, result.tool_calls)}; {_usage_line(result.usage)}"
    )
    lines = [head, f"Goal: {result.goal}"]
    if result.detail:
        lines.append(f"Note: {result.detail}")
    if result.handed_over:
        lines.append(
            f"Handed over to you: {', '.join(result.handed_over)} (still running, now in "
            "your session: use the process tool to poll, wait for or kill them)"
        )
    lines.append("Summary:" if result.summary.strip() else "Summary: (none)")
    if result.summary.strip():
        lines.append(result.summary)
    return "\n".join(lines)


def format_batch(batch: BatchResult) -> str:
    """The text the parent model reads (tool result or background input)."""
    counts: dict[str, int] = {}
    for status in batch.statuses:
        counts[status] = counts.get(status, 0) + 1
    for flag, n in (
        ("truncated", sum(r.truncated for r in batch.results)),
        ("not fitting the schema", sum(r.schema_valid is False for r in batch.results)),
    ):
        if n:
            counts[flag] = n
    tally = ", ".join(f"{n} {s}" for s, n in counts.items())
    kind = "Background delegation" if batch.background else "Delegation"
    lines = [
        f"[{kind} {batch.delegation_id} finished: {len(batch.results)} task(s), {tally}, "
        f"in {batch.duration:.1f}s]"
    ]
    lines.extend(format_task(i, r) for i, r in enumerate(batch.results, 1))
    return "\n\n".join(lines)
