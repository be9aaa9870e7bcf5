"""Smart approvals: the auxiliary model judges a flagged command before a person is asked.

In approval mode ``smart`` (``ApprovalSession.mode``), a flagged command that a
person could be asked about goes to a ``Judge`` first: one short structured
call (a forced ``verdict`` tool call, or a one-word reply) answering
``approve`` (this command runs, nothing is remembered), ``deny`` (refused, with
the judge's reason) or ``escalate`` (the person is asked). A timeout, an error,
an empty or unreadable reply escalate. Never judged: the hardline floor (only
refused), opaque findings and a person's questions (instruction files), and
the file tools' approvals. After ``breaker`` smart denials in a row in a
session, the next flagged commands go straight to the person until one is
approved.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs
import trio

from hermes.model.types import Message, ModelRequest, TextBlock, ToolSpec

if TYPE_CHECKING:
    from hermes.model.client import ModelClient

    from .approval import ApprovalRequest


class ApprovalMode(enum.Enum):
    SMART = "smart"
    """The judge answers first; the person gets what it escalates."""
    MANUAL = "manual"
    """The person answers every flagged command."""
    OFF = "off"
    """Flagged commands run unasked (as yolo: never the floor, never an opaque finding)."""


class JudgeChoice(enum.Enum):
    APPROVE = "approve"
    DENY = "deny"
    ESCALATE = "escalate"


@attrs.frozen(slots=True)
class Judgement:
    choice: JudgeChoice
    reason: str = ""


Judge = Callable[["ApprovalRequest"], Awaitable[Judgement]]
"""Judges one flagged command; the gate bounds it with the session's ``judge_timeout``."""

JUDGE_SYSTEM = (
    "You are the safety reviewer of a coding agent's shell commands. A command was flagged "
    "by pattern rules. Decide: approve when it is clearly what a careful developer would run "
    "for an ordinary task and the flagged part is routine (deleting a build or cache folder "
    "inside the project, a forced push to the agent's own feature branch); deny when it could "
    "destroy data or systems outside the task, exfiltrate secrets, or looks like an attempt "
    "to get around the rules; escalate to the user when unsure. Answer by calling the verdict "
    "tool once, with a one-sentence reason."
)

VERDICT_TOOL = ToolSpec(
    "verdict",
    "Give the verdict on the flagged command.",
    {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["approve", "deny", "escalate"]},
            "reason": {"type": "string"},
        },
        "required": ["decision"],
    },
)


def judge_prompt(request: ApprovalRequest, cwd: str = "") -> str:
    """What the judge is shown: the command, why it was flagged, where it runs."""
    where = f"\nWorking directory: {cwd}" if cwd else ""
    return (
        f"Command:\n{request.command}\n\nFlagged because: {request.reasons}{where}\n\n"
        "Approve, deny or escalate?"
    )


def read_verdict(tool_input: Any, text: str) -> Judgement:
    """The judgement in a ``verdict`` call's input, else in a one-word reply; else escalate."""
    if isinstance(tool_input, dict):
        decision = str(tool_input.get("decision", "")).strip().lower()
        reason = str(tool_input.get("reason", "")).strip()
        for choice in JudgeChoice:
            if decision == choice.value:
                return Judgement(choice, reason)
    words = text.strip().split(None, 1)
    if words:
        head = words[0].strip(".:!*\"'").lower()
        rest = words[1].strip() if len(words) > 1 else ""
        for choice in JudgeChoice:
            if head == choice.value:
                return Judgement(choice, rest)
        try:
            return read_verdict(json.loads(text), "")
        except (ValueError, RecursionError):
            pass
    shown = " ".join(text.split())[:80]
    return Judgement(JudgeChoice.ESCALATE, f"the judge's reply was unreadable ({shown!r})")


@attrs.frozen(slots=True, kw_only=True)
class ModelJudge:
    """A ``Judge`` that asks a model through the project's ``ModelClient``."""

    client: ModelClient
    model: str
    max_tokens: int = 300
    cwd: str = ""

    async def __call__(self, request: ApprovalRequest) -> Judgement:
        call = ModelRequest(
            model=self.model,
            messages=(Message.user(judge_prompt(request, self.cwd)),),
            max_tokens=self.max_tokens,
            system=(TextBlock(JUDGE_SYSTEM),),
            tools=(VERDICT_TOOL,),
            tool_choice="any",
            cache_conversation=False,
        )
        from hermes.model.errors import ModelError  # the SDK loads late: keep imports light

        try:
            response = await self.client.complete(call)
        except ModelError as error:
            return Judgement(JudgeChoice.ESCALATE, f"the judge's call failed ({error})")
        uses = response.message.tool_uses()
        return read_verdict(uses[0].input if uses else None, response.message.text())


async def ask_judge(judge: Judge, request: ApprovalRequest, timeout: float) -> Judgement:
    """The judge's answer within ``timeout``; a timeout or a failure escalates."""
    with trio.move_on_after(timeout):
        try:
            answer: object = await judge(request)
        except Exception as exc:  # a broken judge must not decide anything
            return Judgement(JudgeChoice.ESCALATE, f"the judge failed ({type(exc).__name__})")
        if isinstance(answer, Judgement):
            return answer
        return Judgement(JudgeChoice.ESCALATE, f"the judge answered {type(answer).__name__}")
    return Judgement(JudgeChoice.ESCALATE, f"the judge did not answer within {timeout:g} s")
