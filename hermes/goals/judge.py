"""The goal judge: one short structured call to the auxiliary model (seed #221).

The judge sees the goal (with its contract or subgoals) and the agent's latest
reply, and answers by calling a ``verdict`` tool: ``done``, ``continue``,
``blocked`` or ``wait`` with a one-sentence reason; it samples at temperature 0.
A reply in text is read too (a JSON object, or a verdict word first). A failed call is a *transport*
failure and counts as continue (fail-open); a reply that holds no verdict is a
*parse* failure and also continues; the keeper pauses the goal after too many
of either in a row. ``draft_contract`` (``/goal draft``, seed #222) asks the
same model to expand an objective into a contract; any failure gives None.
"""

from __future__ import annotations

import enum
import json
import re
from typing import TYPE_CHECKING, Any

import attrs
import trio

from hermes.model.types import Message, ModelRequest, TextBlock, ToolSpec

from .record import Contract, Goal

if TYPE_CHECKING:
    from hermes.model.client import ModelClient

REPLY_LIMIT = 4000
"""Characters of the agent's reply the judge sees (its end: where a verdict is said)."""
JUDGE_MAX_TOKENS = 1024
JUDGE_TEMPERATURE = 0.0
"""The judge and the contract draft sample at temperature 0 (seeds #221, #222; a loop's
``--until`` reuses the judge, #227): the same reply gets the same verdict."""


class Verdict(enum.Enum):
    DONE = "done"
    CONTINUE = "continue"
    BLOCKED = "blocked"
    WAIT = "wait"


@attrs.frozen(slots=True)
class Judged:
    verdict: Verdict
    reason: str
    parse_failed: bool = False
    transport_failed: bool = False
    wait_seconds: float | None = None
    wait_on_session: str | None = None
    """``wait``: a background process of this session (its id) whose exit, or whose
    watch-pattern notice, ends the wait."""
    wait_on_pid: int | None = None
    """``wait``: a pid on this host whose exit ends the wait."""


JUDGE_SYSTEM = (
    "You are a strict judge deciding whether an autonomous agent has achieved a user's "
    "standing goal, from the goal and the agent's most recent reply. Verdicts:\n"
    "done: the goal is fully satisfied and the reply shows the deliverable exists or "
    "confirms it was completed (with a contract: its verification criterion is met and "
    "the reply shows concrete evidence of it).\n"
    "blocked: the goal cannot be satisfied as stated, or the agent needs the user's input "
    "or has stopped to wait for the user. Quote any error the reply names.\n"
    "wait: not done, and the agent cannot progress until work already running on its own "
    "finishes. For a background process listed below that the reply shows it waits on "
    "(a build, a test run, a CI poller), give its id in wait_on_session (the wait ends "
    "when it exits or its watch patterns match); for another process, its pid in "
    "wait_on_pid (ends when it exits); for a fixed delay (a rate limit, a backoff), "
    "wait_seconds. Never wait just because work remains.\n"
    "continue: not done and there is a concrete next step the agent can take now; the "
    "default when in doubt.\n"
    "Answer by calling the verdict tool once, with a one-sentence reason."
)

VERDICT_TOOL = ToolSpec(
    "verdict",
    "Give the verdict on the goal.",
    {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": [v.value for v in Verdict]},
            "reason": {"type": "string"},
            "wait_seconds": {"type": "integer", "minimum": 1},
            "wait_on_session": {"type": "string"},
            "wait_on_pid": {"type": "integer", "minimum": 1},
        },
        "required": ["verdict", "reason"],
    },
)

DRAFT_SYSTEM = (
    "Turn the user's plain-language objective into a completion contract for an "
    "autonomous coding agent, with five short fields: outcome (the end state), "
    "verification (the concrete command, test or artifact that proves it), constraints "
    "(what must not change or regress), boundaries (files, tools or systems in scope), "
    "stop_when (when to stop and ask the user). Use an empty string for a field that "
    'cannot be inferred. Reply only with one JSON object: {"outcome": "...", '
    '"verification": "...", "constraints": "...", "boundaries": "...", "stop_when": "..."}'
)


def judge_prompt(goal: Goal, reply: str, background: str = "") -> str:
    """What the judge is shown: the goal, its contract and subgoals, the reply's end, and
    the session's running background processes (``background``, one line each)."""
    parts = [f"Goal:\n{goal.text}"]
    contract = goal.contract.render()
    if contract:
        parts.append(f"Completion contract (the definition of done):\n{contract}")
    if goal.subgoals:
        numbered = "\n".join(f"- {i}. {s}" for i, s in enumerate(goal.subgoals, 1))
        parts.append(f"Additional criteria (all must be met for done):\n{numbered}")
    shown = reply if len(reply) <= REPLY_LIMIT else "[...]" + reply[-REPLY_LIMIT:]
    parts.append(f"Agent's most recent reply:\n{shown}")
    if background:
        parts.append(
            "Background processes the agent has running (it may be waiting on one):\n" + background
        )
    parts.append("Is the goal done, blocked, continue, or wait?")
    return "\n\n".join(parts)


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def _json_object(text: str) -> dict[str, Any] | None:
    text = text.strip().strip("`")
    for candidate in (text, *(m.group(0) for m in [_OBJECT.search(text)] if m)):
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def read_verdict(data: object, text: str) -> Judged:
    """The verdict in a ``verdict`` call's input, a JSON reply or a leading word."""
    if not isinstance(data, dict):
        data = _json_object(text)
    if isinstance(data, dict) and isinstance(data.get("verdict"), str):
        word = data["verdict"].strip().lower()
        reason = str(data.get("reason") or "").strip() or "no reason given"
        for verdict in Verdict:
            if word == verdict.value:
                if verdict is Verdict.WAIT:
                    return _wait(data, reason)
                return Judged(verdict, reason)
    words = text.strip().split(None, 1)
    if words:
        head = words[0].strip(".:!*\"'").lower()
        for verdict in (Verdict.DONE, Verdict.CONTINUE, Verdict.BLOCKED):
            if head == verdict.value:
                return Judged(verdict, words[1].strip() if len(words) > 1 else "no reason given")
    shown = " ".join(text.split())[:200]
    return Judged(Verdict.CONTINUE, f"the judge's reply held no verdict ({shown!r})", True)


def _positive(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def _wait(data: dict[str, Any], reason: str) -> Judged:
    """A ``wait`` and what it waits on: a process of the session first (its own trigger
    ends it), then a pid, then a time; a wait on nothing is a continue."""
    session = data.get("wait_on_session")
    if isinstance(session, str) and session.strip():
        return Judged(Verdict.WAIT, reason, wait_on_session=session.strip()[:100])
    pid = _positive(data.get("wait_on_pid"))
    if pid is not None and pid == int(pid):
        return Judged(Verdict.WAIT, reason, wait_on_pid=int(pid))
    seconds = _positive(data.get("wait_seconds"))
    if seconds is not None:
        return Judged(Verdict.WAIT, reason, wait_seconds=seconds)
    return Judged(Verdict.CONTINUE, f"{reason} (a wait on nothing: continuing)")


async def judge_goal(
    client: ModelClient,
    model: str,
    goal: Goal,
    reply: str,
    timeout: float,
    background: str = "",
) -> Judged:
    """Ask the judge about ``reply``; never raises a model error (they are failures)."""
    if not reply.strip():
        return Judged(Verdict.CONTINUE, "the reply was empty (nothing to judge)")
    request = ModelRequest(
        model=model,
        messages=(Message.user(judge_prompt(goal, reply, background)),),
        max_tokens=JUDGE_MAX_TOKENS,
        system=(TextBlock(JUDGE_SYSTEM),),
        tools=(VERDICT_TOOL,),
        tool_choice="any",
        cache_conversation=False,
        temperature=JUDGE_TEMPERATURE,
    )
    from hermes.model.errors import ModelError  # the SDK loads late: keep imports light

    with trio.move_on_after(timeout):
        try:
            response = await client.complete(request)
        except ModelError as error:
            return Judged(Verdict.CONTINUE, f"the judge's call failed: {error}", False, True)
        uses = response.message.tool_uses()
        return read_verdict(uses[0].input if uses else None, response.message.text())
    return Judged(Verdict.CONTINUE, f"the judge did not answer within {timeout:g} s", False, True)


async def draft_contract(
    client: ModelClient, model: str, objective: str, timeout: float
) -> Contract | None:
    """A contract drafted from ``objective``; None when the call fails or says nothing."""
    request = ModelRequest(
        model=model,
        messages=(Message.user(f"Objective:\n{objective}"),),
        max_tokens=JUDGE_MAX_TOKENS,
        system=(TextBlock(DRAFT_SYSTEM),),
        cache_conversation=False,
        temperature=JUDGE_TEMPERATURE,
    )
    from hermes.model.errors import ModelError

    with trio.move_on_after(timeout):
        try:
            response = await client.complete(request)
        except ModelError:
            return None
        contract = Contract.from_mapping(_json_object(response.message.text()))
        return None if contract.empty else contract
    return None
