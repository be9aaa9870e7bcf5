"""What a delegation asks for: ``TaskSpec`` and the batch checks (placeholders refused).

A ``delegate_task`` call carries either one ``goal`` (with ``context``) or a
list of ``tasks``; top-level ``toolsets``, ``output_schema`` and
``orchestrate`` apply to every task that does not set its own. The batch is
refused whole, before anything starts, when a goal is empty or a placeholder
("task 1", "TBD", "...") or still holds an unexpanded template (``{goal}``,
``{{ item }}``, ``${TASK}``, ``<goal>``): a model that did not fill in its own
plan would otherwise spend a child on nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .errors import InvalidBatch

_PLACEHOLDER = re.compile(
    r"^\W*(?:(?:sub[\s-]?)?task|goal|item|step|todo|job|subagent|agent|placeholder|tbd|tba|"
    r"n/?a|none|null|example|foo|bar|test)(?:[\s_#-]*\d+)?\W*$",
    re.IGNORECASE,
)
_TEMPLATE = re.compile(
    r"\{\{.*?\}\}|\{%.*?%\}|\$\{[^}]*\}|\{[A-Za-z_][A-Za-z0-9_]*\}|"
    r"<(?:goal|task|context|description|insert[^>]*|placeholder|your[^>]*)>|\[insert[^\]]*\]",
    re.IGNORECASE,
)
MIN_GOAL_CHARS = 4


@attrs.frozen(slots=True)
class TaskSpec:
    """One child's assignment."""

    goal: str
    context: str = ""
    toolsets: tuple[str, ...] | None = None
    """Toolset or tool names to offer (intersected with the parent's); None: the parent's."""
    output_schema: Mapping[str, Any] | None = None
    orchestrate: bool = False
    """The model's request for a child that delegates further: parsed, then ignored
    (seed #243: code decides the role from depth alone, ``child.may_orchestrate``)."""


def placeholder_problem(goal: str) -> str | None:
    """Why ``goal`` is not a real goal, or None when it looks like one."""
    text = goal.strip()
    if not text:
        return "the goal is empty"
    if _PLACEHOLDER.match(text) or set(text) <= set(".…-_ *#"):
        return f"the goal {text!r} is a placeholder, not a task"
    found = _TEMPLATE.search(text)
    if found:
        return f"the goal holds an unexpanded template {found.group(0)!r}"
    if len(text) < MIN_GOAL_CHARS:
        return f"the goal {text!r} is too short to act on"
    return None


def _strings(value: object, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InvalidBatch(f"{what} must be a list of toolset or tool names")
    return tuple(value)


def _schema(value: object, what: str) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidBatch(f"{what} must be a JSON schema object")
    return value


def parse_batch(args: Mapping[str, Any], *, max_batch: int) -> list[TaskSpec]:
    """The tasks of a ``delegate_task`` call; ``InvalidBatch`` naming every problem."""
    shared_toolsets = _strings(args.get("toolsets"), "toolsets")
    shared_schema = _schema(args.get("output_schema"), "output_schema")
    shared_orchestrate = bool(args.get("orchestrate", False))
    raw_tasks = args.get("tasks")
    goal = args.get("goal")
    if raw_tasks is not None and goal is not None:
        raise InvalidBatch("give either goal (one task) or tasks (a batch), not both")
    if raw_tasks is None:
        if goal is None:
            raise InvalidBatch("give a goal (one task) or tasks (a batch)")
        raw_tasks = [{"goal": goal, "context": args.get("context", "")}]
    if not isinstance(raw_tasks, Sequence) or isinstance(raw_tasks, str) or not raw_tasks:
        raise InvalidBatch("tasks must be a non-empty list of {goal, context} objects")
    if len(raw_tasks) > max_batch:
        raise InvalidBatch(f"{len(raw_tasks)} tasks in one call; at most {max_batch} are allowed")
    tasks: list[TaskSpec] = []
    problems: list[str] = []
    for index, raw in enumerate(raw_tasks, 1):
        if not isinstance(raw, Mapping):
            problems.append(f"task {index}: expected an object with a goal")
            continue
        goal_text = raw.get("goal")
        if not isinstance(goal_text, str):
            problems.append(f"task {index}: goal must be a string")
            continue
        problem = placeholder_problem(goal_text)
        if problem is not None:
            problems.append(f"task {index}: {problem}")
            continue
        context = raw.get("context") or ""
        if not isinstance(context, str):
            problems.append(f"task {index}: context must be a string")
            continue
        toolsets = _strings(raw.get("toolsets"), f"task {index} toolsets")
        schema = _schema(raw.get("output_schema"), f"task {index} output_schema")
        tasks.append(
            TaskSpec(
                goal=goal_text.strip(),
                context=context.strip(),
                toolsets=toolsets if toolsets is not None else shared_toolsets,
                output_schema=schema if schema is not None else shared_schema,
                orchestrate=bool(raw.get("orchestrate", shared_orchestrate)),
            )
        )
    if problems:
        raise InvalidBatch(
            "The batch was refused and nothing started: "
            + "; ".join(problems)
            + ". Write each goal out in full (what to do, where, what to report)."
        )
    return tasks
