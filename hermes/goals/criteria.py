"""``/goal gate ...`` and ``/subgoal ...`` on a goal, as pure functions (seed #234).

Each takes the goal and the command and returns the goal as it now is with the
answer's text; the keeper stores the goal. Only an attended session may add a
gate (gates run shell commands with no later approval); removing and clearing
are always allowed. A bad index is a ``GoalError`` naming the items there are.
"""

from __future__ import annotations

from typing import TypeVar

import attrs

from .commands import GateCommand, SubgoalCommand
from .record import Gate, Goal, GoalError
from .settings import GoalSettings

T = TypeVar("T")


def item_at(items: tuple[T, ...], index: int, usage: str) -> T:
    """The ``index``-th item (from 1), or a ``GoalError`` naming the ones there are."""
    if not 1 <= index <= len(items):
        have = f"1 to {len(items)}" if items else "none: the list is empty"
        raise GoalError(f"{usage} {index}: there is no item {index} ({have})")
    return items[index - 1]


def apply_gate(
    goal: Goal, command: GateCommand, settings: GoalSettings, attended: bool
) -> tuple[Goal, str]:
    if command.action == "list":
        lines = [
            f"{i}. $ {g.command}" + (f" (exit {g.last_exit})" if g.last_exit else "")
            for i, g in enumerate(goal.gates, 1)
        ]
        return goal, "\n".join(lines) or "no quality gates (/goal gate add COMMAND)"
    if command.action == "add":
        if not attended:
            raise GoalError(
                "/goal gate add: gates run shell commands with no later approval, so only "
                "a person's attended session may add them"
            )
        gate = Gate(
            command=command.command,
            timeout=settings.gate_timeout,
            max_retries=settings.gate_retries,
        )
        return attrs.evolve(goal, gates=(*goal.gates, gate)), (
            f"gate added: $ {gate.command} (must pass before the goal can be done; "
            f"{gate.max_retries} retries, {gate.timeout:g} s timeout)"
        )
    if command.action == "remove":
        gone = item_at(goal.gates, command.index, "/goal gate remove")
        kept = tuple(g for g in goal.gates if g is not gone)
        return attrs.evolve(goal, gates=kept), f"gate removed: $ {gone.command}"
    return attrs.evolve(goal, gates=()), f"{len(goal.gates)} gate(s) cleared"


def apply_subgoal(goal: Goal, command: SubgoalCommand) -> tuple[Goal, str]:
    if command.action == "list":
        lines = [f"{i}. {s}" for i, s in enumerate(goal.subgoals, 1)]
        return goal, "\n".join(lines) or "no subgoals (/subgoal TEXT adds one)"
    if command.action == "add":
        added = attrs.evolve(goal, subgoals=(*goal.subgoals, command.text))
        return added, f"subgoal {len(goal.subgoals) + 1} added: {command.text}"
    if command.action == "remove":
        gone = item_at(goal.subgoals, command.index, "/subgoal remove")
        kept = tuple(s for i, s in enumerate(goal.subgoals, 1) if i != command.index)
        return attrs.evolve(goal, subgoals=kept), f"subgoal removed: {gone}"
    return attrs.evolve(goal, subgoals=()), f"{len(goal.subgoals)} subgoal(s) cleared"
