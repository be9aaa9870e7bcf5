"""One card's run: a fresh unattended worker session, its rounds, and how it ends.

Each round is one turn of the worker session. After it, code looks at the card
first: a worker that completed it, handed it to review or blocked it (its
``kanban_*`` tools) ends the run. Otherwise:

- the stop nudge (#230, on by default): the worker is sent back at most
  ``STOP_NUDGES`` times a round to finish, block or hand off the card;
- then, in goal mode (#224), the goal judge rules on the latest reply against
  the card's title and body: ``blocked`` blocks the card, ``done`` sends one
  nudge to call ``kanban_complete`` and blocks the card if the worker still does
  not, ``continue``/``wait`` sends a continuation until the turn budget is spent
  (which blocks the card); a judge transport failure stops the loop (blocked);
- outside goal mode the card is blocked: the worker ended without saying.

A blocked card waits for a person (#235). The session is closed however the run
ends. ``hold`` waits while the emergency stop is on before each new round.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs
import trio

from hermes.goals.judge import Verdict, judge_goal
from hermes.goals.record import Goal
from hermes.store.kanban_queries import Card

from .settings import KanbanSettings

if TYPE_CHECKING:
    from hermes.model.client import ModelClient
    from hermes.tools import Tool

STOP_NUDGES = 2
HANDED_OFF = ("done", "review", "blocked")
CLOSE_TIMEOUT = 15.0

WORKER_PROMPT = (
    "You are a kanban worker: you work on one card alone, and nobody is watching.\n\n"
    "Card {id}: {title}\n\n{body}\n\n"
    "When the card is done, call kanban_complete with a summary of what you did and the "
    "evidence that it works. If a person should check it first, call kanban_request_review. "
    "If you cannot go on, call kanban_block with the reason."
)
STOP_NUDGE = (
    "[kanban] You have not finished your card. Call kanban_complete (with the evidence) if "
    "it is done, kanban_request_review if a person should check it, or kanban_block with the "
    "reason if you cannot go on; otherwise keep working on it."
)
FINALIZE = (
    "[kanban] The goal judge finds the card done ({note}). Call kanban_complete now with a "
    "summary and the evidence."
)
CONTINUE = (
    "[Continuing your kanban card: round {round} of {budget}]\nCard: {title}\n\n"
    "The judge's note on your last reply: {note}\n\n"
    "Take the next concrete step. When the card is done, call kanban_complete with the "
    "evidence; if you cannot go on, call kanban_block."
)


@attrs.frozen(slots=True)
class Reply:
    """How a worker's turn ended: ``completed`` or another turn end, and its text."""

    ended: str
    text: str
    detail: str = ""


class WorkerSession(Protocol):
    session_id: str

    async def turn(self, text: str) -> Reply: ...

    async def close(self, reason: str) -> None: ...


OpenWorker = Callable[[Card, "Sequence[Tool]"], Awaitable[WorkerSession]]
"""Opens the card's worker session with these extra tools (the ``kanban_*`` ones)."""


@attrs.define(slots=True)
class RunState:
    """What the run says back to the board (read when its task ends)."""

    session_id: str | None = None
    blocked: str | None = None
    """Why the run blocked the card (None: the worker handed it off, or it was stopped)."""
    turns: int = 0
    rounds: int = 0


@attrs.frozen(slots=True, kw_only=True)
class WorkerDeps:
    open: OpenWorker
    client: ModelClient | None
    judge_model: str
    settings: KanbanSettings
    hold: Callable[[], Awaitable[None]]
    """Returns once the emergency stop is off."""
    started: Callable[[str], Awaitable[None]]
    """Told the worker session's id as soon as it exists."""


def worker_prompt(card: Card) -> str:
    return WORKER_PROMPT.format(id=card.id, title=card.title, body=card.body or "(no body)")


async def work(
    card: Card,
    tools: Sequence[Tool],
    deps: WorkerDeps,
    status: Callable[[], str | None],
    state: RunState,
) -> None:
    """Run ``card`` (see the module docstring); the outcome is left in ``state``."""
    session = await deps.open(card, tools)
    state.session_id = session.session_id
    await deps.started(session.session_id)
    reason = "the kanban card's run ended"
    try:
        await _rounds(card, session, deps, status, state)
    except trio.Cancelled:
        reason = "the kanban card's run was stopped"
        raise
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_TIMEOUT):
            await session.close(reason)


async def _rounds(
    card: Card,
    session: WorkerSession,
    deps: WorkerDeps,
    status: Callable[[], str | None],
    state: RunState,
) -> None:
    settings = deps.settings
    text = worker_prompt(card)
    nudges = 0
    finalizing = False
    goal = Goal(text=f"{card.title}\n\n{card.body}".strip(), max_turns=settings.goal_max_turns)
    while True:
        reply = await session.turn(text)
        state.turns += 1
        if status() in HANDED_OFF or status() is None:
            return
        if reply.ended != "completed":
            state.blocked = f"the worker's turn ended {reply.ended}: {reply.detail or reply.text}"
            return
        await deps.hold()
        if settings.stop_nudge and nudges < STOP_NUDGES:
            nudges += 1
            text = STOP_NUDGE
            continue
        nudges = 0
        if not card.goal:
            state.blocked = (
                "the worker ended without calling kanban_complete, kanban_request_review or "
                "kanban_block"
            )
            return
        if finalizing:
            state.blocked = (
                "the goal judge found the card done, but the worker never called kanban_complete"
            )
            return
        state.rounds += 1
        if deps.client is None:
            state.blocked = "no goal judge is available"
            return
        judged = await judge_goal(
            deps.client, deps.judge_model, goal, reply.text, settings.aux_timeout
        )
        if judged.transport_failed:
            state.blocked = f"the goal judge failed: {judged.reason}"
            return
        if judged.verdict is Verdict.BLOCKED:
            state.blocked = f"the goal judge ruled it blocked: {judged.reason}"
            return
        if judged.verdict is Verdict.DONE:
            finalizing = True
            text = FINALIZE.format(note=judged.reason)
            continue
        if state.rounds >= settings.goal_max_turns:
            state.blocked = f"the turn budget of {settings.goal_max_turns} rounds is spent"
            return
        text = CONTINUE.format(
            round=state.rounds + 1, budget=settings.goal_max_turns, title=card.title,
            note=judged.reason,
        )  # fmt: skip
