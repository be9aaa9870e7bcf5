"""Elicitation: a server asks the person a question in the middle of a call (seed #126).

The question goes to the surface that owns the session whose call is running
on that server, as an approval prompt covering this one request: approved
becomes ``accept``, denied ``decline``, no answer in the session's approval
timeout ``cancel``. A question with fields carries its schema as the
request's ``FormAnswer``; the typed ``content`` the surface approved with
(checked by the session's broker) is what ``accept`` sends, else ``{}``.
It is declined without asking when nobody can answer: no call is in flight
on the server, more than one is (the question cannot be told apart), or the
session has no surface attached (unattended). URL-mode requests (``mode: url``) are always declined.
"""

from __future__ import annotations

import logging

import mcp_types as types

from hermes.tools import Finding, Verdict
from hermes.tools.approval import FormAnswer, decide_findings

from .link import ServerLink

log = logging.getLogger("hermes.mcp")

_ACCEPTED = (Verdict.APPROVED_ONCE, Verdict.APPROVED_SESSION, Verdict.APPROVED_ALWAYS)


async def elicit(link: ServerLink, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The person's answer to ``params`` (see the module docstring)."""
    name = link.config.name
    if isinstance(params, types.ElicitRequestURLParams):
        return _declined(name, "URL-mode requests are always declined")
    calls = list(link.calls.values())
    if len(calls) != 1:
        why = "no call is in flight" if not calls else f"{len(calls)} calls are in flight"
        return _declined(name, f"{why}, so nobody can be asked")
    ctx = calls[0]
    if ctx.ask_approval is None:
        return _declined(name, "the session is unattended")
    finding = Finding(
        f"mcp-elicit:{name}",
        f"MCP server '{name}' asks: {params.message[:500]}",
        hardline=False,
        opaque=True,  # asked each time: never remembered, never waved through by yolo
    )
    form = FormAnswer(dict(params.requested_schema)) if _has_fields(params) else None
    decision = await decide_findings(
        f"MCP server '{name}' asks during {ctx.tool_name or 'a call'}: {params.message[:500]}",
        (finding,),
        session=ctx.approvals,
        ask=ctx.ask_approval,
        call_id=ctx.call_id,
        pause=ctx.pause_deadline,
        form=form,
    )
    if decision.verdict in _ACCEPTED:
        content = form.content if form is not None and form.content is not None else {}
        return types.ElicitResult(action="accept", content=content)
    if decision.verdict is Verdict.TIMEOUT:
        return types.ElicitResult(action="cancel")
    return _declined(name, f"the person answered {decision.verdict.value}")


def _has_fields(params: types.ElicitRequestFormParams) -> bool:
    schema = params.requested_schema
    return isinstance(schema, dict) and bool(schema.get("properties"))


def _declined(name: str, why: str) -> types.ElicitResult:
    log.info("MCP server %s asked the person; declined: %s", name, why)
    return types.ElicitResult(action="decline")
