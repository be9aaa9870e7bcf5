"""The worker's tools: ``kanban_complete``, ``kanban_request_review``, ``kanban_block``.

Only a card's worker session has them, bound to its card and run (a token the
board checks, so a stale run cannot move the card). In goal mode, completing
or asking for review passes the gate of #225 first: the goal judge rules on the
worker's evidence against the card's title and body; ``done`` lets it through,
any other verdict refuses it with the judge's note; a judge that cannot be
reached lets it through.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import trio

from actors import ActorExited, CallTarget
from hermes.cron.tool import session_of
from hermes.goals.judge import Verdict, judge_goal
from hermes.goals.record import Goal
from hermes.store.kanban_queries import Card
from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome

from .requests import Handoff, KanbanFailed

if TYPE_CHECKING:
    from hermes.model.client import ModelClient

TEXT_SCHEMA = {"type": "string", "minLength": 1, "maxLength": 20000}


class CardTool(Tool):
    action = ""
    field = "summary"
    kind = ToolKind.OTHER
    toolset = "kanban"

    def __init__(
        self,
        card: Card,
        token: str,
        board: Callable[[], CallTarget | None],
        judge: tuple[ModelClient, str, float] | None = None,
    ) -> None:
        self.card = card
        self.token = token
        self.board = board
        self.judge = judge
        self.owner: list[str] = []
        """The worker session's id once it exists (shared by the card's tools): a call from
        any other session (a subagent of the worker, seed #244) is refused."""
        self.input_schema = {
            "type": "object",
            "properties": {self.field: TEXT_SCHEMA},
            "required": [self.field],
            "additionalProperties": False,
        }

    async def gate(self, evidence: str) -> str | None:
        """Why the goal judge refuses the handoff (None: it may go through)."""
        if not self.card.goal or self.judge is None or self.action == "block":
            return None
        client, model, timeout = self.judge
        goal = Goal(text=f"{self.card.title}\n\n{self.card.body}".strip())
        judged = await judge_goal(client, model, goal, evidence, timeout)
        if judged.transport_failed or judged.verdict is Verdict.DONE:
            return None
        return judged.reason

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        text: str = args[self.field]
        caller = session_of(ctx)
        if self.owner and caller is not None and caller != self.owner[0]:
            return ToolOutcome.error(
                f"{self.name}: only card {self.card.id}'s worker session may hand it off",
                reason="refused",
            )
        refused = await self.gate(text)
        if refused is not None:
            return ToolOutcome.error(
                f"The goal judge does not accept this yet: {refused}. Keep working on the "
                f"card, then call {self.name} again with the evidence.",
                reason="gate",
            )
        target = self.board()
        if target is None:
            return ToolOutcome.error("The kanban board is not running; try again.")
        try:
            answer = await target.call(
                Handoff(self.card.id, self.token, self.action, text), timeout=15.0
            )
        except (ActorExited, trio.TooSlowError) as error:
            return ToolOutcome.error(f"{self.name}: the board did not answer ({error})")
        if isinstance(answer, KanbanFailed):
            return ToolOutcome.error(f"{self.name}: {answer.error}", reason="refused")
        return ToolOutcome.ok(str(answer), card=self.card.id, action=self.action)


class CompleteTool(CardTool):
    name = "kanban_complete"
    description = (
        "Mark your kanban card done. Give a summary of what you did and the evidence that "
        "it works (commands run, their results). Call it once, when the card is finished."
    )
    action = "complete"


class ReviewTool(CardTool):
    name = "kanban_request_review"
    description = (
        "Hand your kanban card to a person for review: say what you did, the evidence, and "
        "what they should check."
    )
    action = "review"


class BlockTool(CardTool):
    name = "kanban_block"
    description = (
        "Block your kanban card when you cannot go on (missing access, an unclear spec, a "
        "decision only a person can make); give the reason. A person unblocks it."
    )
    action = "block"
    field = "reason"


def card_tools(
    card: Card,
    token: str,
    board: Callable[[], CallTarget | None],
    judge: tuple[ModelClient, str, float] | None,
) -> tuple[CardTool, ...]:
    tools = [kind(card, token, board, judge) for kind in (CompleteTool, ReviewTool, BlockTool)]
    owner: list[str] = []
    for tool in tools:
        tool.owner = owner
    return tuple(tools)
