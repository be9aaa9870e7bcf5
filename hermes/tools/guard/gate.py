"""The path policy applied to a file tool's call: refuse, ask, or let it run.

``guard_read`` and ``guard_write`` return ``None`` when the call may go on, else
the error ``ToolOutcome`` the model sees: what did not happen, exactly why, and
what it may do instead. A ruling that needs approval goes through the
terminal's gate (``approval.decide_findings``): ``~/.ssh/config`` takes the
ordinary approval (yolo skips it, *session* and *always* are remembered); a
protected instruction file is a person's, each time (an opaque finding).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from ..approval import ApprovalDecision, Verdict, decide_findings
from ..base import ToolOutcome
from ..danger import Finding
from .policy import Action, Ruling

if TYPE_CHECKING:
    from ..context import ToolContext

_VERBS = {"read": ("read", "read"), "write": ("write", "written"), "search": ("search", "read")}


def describe(ruling: Ruling, given: str) -> str:
    """``GIVEN (resolves to REAL) is REASON``."""
    where = given
    if ruling.path and os.path.normpath(given) != ruling.path:
        where = f"{given} (resolves to {ruling.path})"
    return f"{where} is {ruling.reason}"


def refusal(tool: str, verb: str, ruling: Ruling, given: str, why: str = "") -> ToolOutcome:
    """The error for a refused call: the tool, the path, the reason, what to do instead."""
    present, past = _VERBS.get(verb, (verb, verb))
    because = why or describe(ruling, given)
    return ToolOutcome.error(
        f"{tool} did NOT {present} {given}: {because}. Nothing was {past}. {ruling.advice}",
        ran=False,
        guard=ruling.key,
    )


def finding(ruling: Ruling, given: str) -> Finding:
    """The approval gate's finding for a ruling that needs approval."""
    return Finding(
        f"path_{ruling.key}",
        f"{describe(ruling, given)}",
        hardline=False,
        opaque=ruling.action is Action.PERSON,
    )


async def guard_read(
    ctx: ToolContext, path: Path, tool: str, verb: str = "read"
) -> ToolOutcome | None:
    ruling = await trio.to_thread.run_sync(ctx.guard.check_read, path)
    if ruling.allowed:
        return None
    return refusal(tool, verb, ruling, str(path))


async def guard_write(
    ctx: ToolContext, path: Path, tool: str, *, whole: bool
) -> ToolOutcome | None:
    """The policy, then approval where it asks for one, then (``whole``) the read state."""
    ruling = await trio.to_thread.run_sync(ctx.guard.check_write, path)
    given = str(path)
    if ruling.action is Action.REFUSE:
        return refusal(tool, "write", ruling, given)
    if ruling.action in (Action.APPROVE, Action.PERSON):
        decision = await decide_findings(
            f"{tool} {given}",
            (finding(ruling, given),),
            session=ctx.approvals,
            ask=ctx.ask_approval,
            call_id=ctx.call_id,
            pause=ctx.pause_deadline,
        )
        if not decision.allowed:
            return refusal(tool, "write", ruling, given, _not_approved(decision, ruling, given))
    if whole:
        problem = await trio.to_thread.run_sync(ctx.files.overwrite_problem, path)
        if problem is not None:
            return ToolOutcome.error(
                f"{tool} did NOT overwrite {given}: {problem}. Nothing was written. Read the "
                "whole file with read_file first (then write it again), or use patch for a "
                "targeted change.",
                ran=False,
                guard="stale_write",
            )
    return None


def _not_approved(decision: ApprovalDecision, ruling: Ruling, given: str) -> str:
    what = describe(ruling, given)
    verdict = decision.verdict
    if verdict is Verdict.DENIED:
        return f"{what}, and the user denied it"
    if verdict is Verdict.TIMEOUT:
        return f"{what}, and no answer came within {decision.timeout:g} s (silence is not consent)"
    if verdict is Verdict.UNATTENDED:
        return f"{what}, and no one is attached to approve it (unattended session)"
    return f"{what}, and the approval request failed ({decision.note or verdict.value})"
