"""The texts the goal keeper sends the agent (continuations) and the person (pause hint)."""

from __future__ import annotations

from .record import Goal

CONTINUATION = (
    "[Continuing toward your standing goal: turn {turn} of {budget}]\nGoal: {goal}\n\n"
    "{criteria}The judge's note on your last reply: {note}\n\n"
    "Take the next concrete step. If the goal is complete, say so and show the evidence. "
    "If you are blocked and need the user, say so clearly and stop."
)
GATE_FAILED = (
    "[Continuing toward your standing goal: a quality gate failed]\nGoal: {goal}\n\n"
    "This gate must pass before the goal can be done, and it failed (attempt {attempt} of "
    "{retries}):\n  $ {command}\nExit code: {code}\nOutput (tail):\n```\n{output}\n```\n\n"
    "Fix the problem so the gate passes, then run it again to confirm. If the gate itself "
    "is wrong or cannot pass, say so and stop."
)
PAUSE_HINT = "/goal resume to keep going (the turn budget starts again), /goal clear to stop"


def continuation(goal: Goal, note: str) -> str:
    """The next turn's prompt: the goal, its contract and subgoals, and ``note``."""
    criteria = ""
    if not goal.contract.empty:
        criteria += f"Completion contract:\n{goal.contract.render()}\n\n"
    if goal.subgoals:
        numbered = "\n".join(f"- {i}. {s}" for i, s in enumerate(goal.subgoals, 1))
        criteria += f"Additional criteria (all must be met):\n{numbered}\n\n"
    return CONTINUATION.format(
        turn=goal.turns_used + 1,
        budget=goal.max_turns,
        goal=goal.text,
        criteria=criteria,
        note=note,
    )
