"""The approval gate for shell commands: turning findings into a decision.

``danger.classify(command)`` finds what is hardline or dangerous in a command;
``decide(command, session=..., ask=...)`` turns findings into a decision:
1. a hardline finding refuses, whatever else is set (yolo included);
2. no finding allows;
3. the session's yolo switch, or approval mode ``off``, allows (it skips the
   dangerous list only), unless
   a finding is *opaque* (``danger.OPAQUE_RULES``: the gate cannot read what
   would run, so it cannot promise the floor);
4. findings all approved for this session or in the permanent allowlist allow
   (never an opaque one);
5. no approval callback attached (unattended: a subagent, a cron run, a
   session no surface approves for) denies, unless the session's
   ``unattended`` policy is ``allow``: then a flagged command runs
   (``unattended_allowed``), never an opaque finding nor a file tool's question;
6. in approval mode ``smart`` with a judge (``smart.py``), the judge answers
   first: approve runs this command, deny refuses it, escalate goes on to 7;
   never for an opaque finding, nor after ``breaker`` smart denials in a row;
7. otherwise the callback is asked, one prompt at a time per session: *once*,
   *session* (remembered in the ``ApprovalSession``), *always* (remembered and
   handed to the caller's allowlist saver) or *deny*; no answer within the
   session's timeout denies: silence is not consent; a failing callback denies.

Approvals are remembered by finding *key* (``recursive_delete``...), as Hermes
does: approving a recursive delete for the session approves later recursive
deletes in it, not arbitrary other dangerous commands. Opaque keys are never
remembered: approving one ``$CMD`` says nothing about the next.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import attrs
import trio

from .danger import THREAD_THRESHOLD, Finding, classify
from .smart import ApprovalMode, Judge, JudgeChoice, ask_judge

log = logging.getLogger("hermes.tools.approval")

# -- the decision ----------------------------------------------------------------------


class ApprovalChoice(enum.Enum):
    """What a person answers to an approval prompt."""

    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    DENY = "deny"


@attrs.define(slots=True)
class FormAnswer:
    """A form a request asks the person to fill in (an MCP elicitation), and their answer.

    ``schema`` is the requested JSON Schema (an object of named fields); the
    surface that approves may give ``content`` with the values, checked against
    it before the approval counts.
    """

    schema: Mapping[str, Any]
    content: dict[str, Any] | None = None


@attrs.frozen(slots=True)
class ApprovalRequest:
    """What an approval surface shows: the command and why it needs approval."""

    command: str
    findings: tuple[Finding, ...]
    call_id: str = ""
    form: FormAnswer | None = attrs.field(default=None, eq=False)
    """A form to fill in with the approval (elicitation); None for a plain yes/no."""

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(f.key for f in self.findings)

    @property
    def reasons(self) -> str:
        return "; ".join(f.description for f in self.findings)


ApprovalCallback = Callable[[ApprovalRequest], Awaitable[ApprovalChoice]]
"""Asks the attached surfaces; the gate bounds the wait with the session's timeout."""
AllowlistSaver = Callable[[frozenset[str]], Awaitable[None]]
"""Persists finding keys approved with *always* (to the config allowlist)."""


class Unattended(enum.Enum):
    """What a flagged command does where no approval callback is attached."""

    DENY = "deny"
    """Refused (the default: a daemon runs turns nobody watches)."""
    ALLOW = "allow"
    """Run, as Hermes runs a headless run other than -q or cron (never the floor, never an
    opaque finding)."""


class Verdict(enum.Enum):
    SAFE = "safe"
    YOLO = "yolo"
    MODE_OFF = "approvals_off"
    SMART_APPROVED = "smart_approved"
    SMART_DENIED = "smart_denied"
    PREAPPROVED = "preapproved"
    APPROVED_ONCE = "approved_once"
    APPROVED_SESSION = "approved_session"
    APPROVED_ALWAYS = "approved_always"
    HARDLINE = "hardline"
    DENIED = "denied"
    TIMEOUT = "timeout"
    UNATTENDED = "unattended"
    UNATTENDED_ALLOWED = "unattended_allowed"
    FAILED = "failed"


_ALLOWING = frozenset(
    {
        Verdict.SAFE,
        Verdict.YOLO,
        Verdict.MODE_OFF,
        Verdict.SMART_APPROVED,
        Verdict.PREAPPROVED,
        Verdict.APPROVED_ONCE,
        Verdict.APPROVED_SESSION,
        Verdict.APPROVED_ALWAYS,
        Verdict.UNATTENDED_ALLOWED,
    }
)


@attrs.frozen(slots=True)
class ApprovalDecision:
    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    note: str = ""
    timeout: float = 0.0

    @property
    def allowed(self) -> bool:
        return self.verdict in _ALLOWING

    @property
    def reasons(self) -> str:
        return "; ".join(f.description for f in self.findings)

    def refusal(self) -> str:
        """The plain statement for the model of what did not run and why."""
        reasons = self.reasons
        if self.verdict is Verdict.HARDLINE:
            hard = "; ".join(f.description for f in self.findings if f.hardline)
            return (
                f"BLOCKED: this command was NOT run. It matches the hardline safety floor "
                f"({hard}), which no approval and no yolo mode can override. Nothing was "
                "executed. Do not retry it or a variant of it; if it is truly needed, tell the "
                "user and let them run it themselves."
            )
        if self.verdict is Verdict.DENIED:
            why = f"the user denied approval ({reasons})"
        elif self.verdict is Verdict.SMART_DENIED:
            why = f"the safety reviewer denied it ({reasons}): {self.note}"
        elif self.verdict is Verdict.TIMEOUT:
            why = (
                f"it needs approval ({reasons}) and no answer came within {self.timeout:g} s "
                "(silence is not consent)"
            )
        elif self.verdict is Verdict.UNATTENDED:
            why = (
                f"it needs approval ({reasons}) and no one is attached to approve it "
                "(unattended session)"
            )
        elif self.verdict is Verdict.FAILED:
            why = f"it needs approval ({reasons}) and the approval request failed: {self.note}"
        else:
            return ""
        return (
            f"Command NOT run: {why}. Nothing was executed. Do not retry the same command; "
            "choose a safer approach or ask the user how to proceed."
        )


@attrs.define(slots=True)
class ApprovalSession:
    """Approval state of one session: yolo, session approvals, the permanent allowlist.

    ``allowlist`` holds finding keys approved *always* (loaded from config by the
    caller); ``save_always`` persists new ones. Prompts are serialized per
    session so concurrent calls never show two prompts at once.
    """

    yolo: bool = False
    timeout: float = 300.0
    """Seconds to wait for an answer (and for an earlier prompt to finish)."""
    allowlist: set[str] = attrs.field(factory=set)
    save_always: AllowlistSaver | None = None
    allowlist_source: Callable[[], frozenset[str]] | None = None
    """The permanent allowlist as it is now (the config file, re-read when it changes)."""
    approved: set[str] = attrs.field(factory=set)
    """Keys approved for this session."""
    save_timeout: float = 10.0
    mode: ApprovalMode = ApprovalMode.SMART
    """``smart`` needs a ``judge``; without one it is ``manual``."""
    judge: Judge | None = None
    judge_timeout: float = 30.0
    breaker: int = 3
    """Smart denials in a row after which the person is asked instead (0: never)."""
    smart_denials: int = 0
    unattended: Unattended = Unattended.DENY
    """Flagged commands where no approval callback is attached: denied or run."""
    _lock: trio.Lock = attrs.field(factory=trio.Lock, init=False, repr=False)

    def preapproved(self, keys: Iterable[str]) -> bool:
        live = self.allowlist_source() if self.allowlist_source is not None else frozenset()
        return all(k in self.approved or k in self.allowlist or k in live for k in keys)

    def breaker_tripped(self) -> bool:
        """The breaker: this many smart denials in a row send the next ones to the person."""
        return self.breaker > 0 and self.smart_denials >= self.breaker


async def decide(
    command: str,
    *,
    session: ApprovalSession,
    ask: ApprovalCallback | None,
    call_id: str = "",
    pause: Callable[[], AbstractContextManager[None]] = nullcontext,
    extra: tuple[Finding, ...] = (),
) -> ApprovalDecision:
    """Decide whether ``command`` may run (see the module docstring for the order).

    ``pause`` is entered while waiting for a person, so a caller's own deadline
    (the tool call's timeout) can stop counting during human wait time.
    Cancellation propagates; it is never turned into a decision. ``extra``:
    findings from elsewhere (the path guard's reading of what the command writes)
    decided together with the command's own.
    """
    if len(command) > THREAD_THRESHOLD:  # keep a huge command line off the event loop
        findings = await trio.to_thread.run_sync(classify, command)
    else:
        findings = classify(command)
    if extra:
        found = {f.key for f in findings}
        findings = (*findings, *(f for f in extra if f.key not in found))
    return await decide_findings(
        command, findings, session=session, ask=ask, call_id=call_id, pause=pause, judged=True
    )


async def decide_findings(
    subject: str,
    findings: tuple[Finding, ...],
    *,
    session: ApprovalSession,
    ask: ApprovalCallback | None,
    call_id: str = "",
    pause: Callable[[], AbstractContextManager[None]] = nullcontext,
    judged: bool = False,
    form: FormAnswer | None = None,
) -> ApprovalDecision:
    """The module docstring's steps for findings already made (``subject`` is shown).

    The file tools ask through this too: an opaque finding is a person's, each
    time; only ``judged`` requests (commands) go to the smart judge.
    """
    if any(f.hardline for f in findings):
        return ApprovalDecision(Verdict.HARDLINE, findings)
    if not findings:
        return ApprovalDecision(Verdict.SAFE)
    opaque = any(f.opaque for f in findings)
    if session.yolo and not opaque:
        return ApprovalDecision(Verdict.YOLO, findings)
    if session.mode is ApprovalMode.OFF and not opaque:
        return ApprovalDecision(Verdict.MODE_OFF, findings)
    keys = frozenset(f.key for f in findings)
    if not opaque and session.preapproved(keys):
        return ApprovalDecision(Verdict.PREAPPROVED, findings)
    if ask is None:
        if judged and not opaque and session.unattended is Unattended.ALLOW:
            return ApprovalDecision(Verdict.UNATTENDED_ALLOWED, findings)
        return ApprovalDecision(Verdict.UNATTENDED, findings)
    request = ApprovalRequest(subject, findings, call_id, form)
    escalated = ""
    smart = session.mode is ApprovalMode.SMART and session.judge is not None
    if judged and smart and not opaque and not session.breaker_tripped():
        assert session.judge is not None
        with pause():
            judgement = await ask_judge(session.judge, request, session.judge_timeout)
        log.info(
            "smart approval of %r: %s (%s)", subject[:200], judgement.choice.value, judgement.reason
        )
        if judgement.choice is JudgeChoice.APPROVE:
            session.smart_denials = 0
            return ApprovalDecision(Verdict.SMART_APPROVED, findings, judgement.reason)
        if judgement.choice is JudgeChoice.DENY:
            session.smart_denials += 1
            note = judgement.reason or "no reason given"
            if session.breaker_tripped():
                note += (
                    f". That is {session.smart_denials} denials in a row: stop trying variations "
                    "of it and report to the user; the next flagged command goes to the user"
                )
            return ApprovalDecision(Verdict.SMART_DENIED, findings, note)
        escalated = f"the safety reviewer escalated: {judgement.reason}"
    with pause():
        choice = await _ask(request, session, ask)
    if isinstance(choice, ApprovalDecision):
        return choice
    if choice is ApprovalChoice.DENY:
        return ApprovalDecision(Verdict.DENIED, findings, escalated)
    session.smart_denials = 0  # a person's approval resets the breaker
    if choice is ApprovalChoice.ONCE:
        return ApprovalDecision(Verdict.APPROVED_ONCE, findings)
    remembered = frozenset(f.key for f in findings if not f.opaque)
    kept = _not_remembered(findings)
    session.approved |= remembered
    if choice is ApprovalChoice.SESSION:
        return ApprovalDecision(Verdict.APPROVED_SESSION, findings, kept)
    session.allowlist |= remembered
    note = await _save_always(session, remembered) if remembered else ""
    return ApprovalDecision(
        Verdict.APPROVED_ALWAYS, findings, "; ".join(n for n in (note, kept) if n)
    )


def _not_remembered(findings: tuple[Finding, ...]) -> str:
    opaque = sorted(f.key for f in findings if f.opaque)
    if not opaque:
        return ""
    return f"not remembered: {', '.join(opaque)} (the gate cannot read what runs; asked each time)"


async def _ask(
    request: ApprovalRequest, session: ApprovalSession, ask: ApprovalCallback
) -> ApprovalChoice | ApprovalDecision:
    findings = request.findings
    with trio.move_on_after(session.timeout) as queued:
        await session._lock.acquire()
    if queued.cancelled_caught:
        return ApprovalDecision(Verdict.TIMEOUT, findings, "an earlier prompt", session.timeout)
    try:
        opaque = any(f.opaque for f in findings)
        if not opaque and session.preapproved(request.keys):  # approved while we queued
            return ApprovalDecision(Verdict.PREAPPROVED, findings)
        with trio.move_on_after(session.timeout) as waited:
            try:
                answer: object = await ask(request)
            except Exception as exc:  # a broken surface must not run the command
                return ApprovalDecision(Verdict.FAILED, findings, f"{type(exc).__name__}: {exc}")
        if waited.cancelled_caught:
            return ApprovalDecision(Verdict.TIMEOUT, findings, timeout=session.timeout)
        if not isinstance(answer, ApprovalChoice):
            return ApprovalDecision(Verdict.FAILED, findings, f"unexpected answer {answer!r}")
        return answer
    finally:
        session._lock.release()


async def _save_always(session: ApprovalSession, keys: frozenset[str]) -> str:
    if session.save_always is None:
        return "no allowlist saver attached: remembered for this session only"
    with trio.move_on_after(session.save_timeout) as scope:
        try:
            await session.save_always(keys)
        except Exception as exc:  # the command was approved; only persistence failed
            return f"allowlist not saved ({type(exc).__name__}: {exc})"
    if scope.cancelled_caught:
        return f"allowlist not saved (timed out after {session.save_timeout:g} s)"
    return ""
