"""Approval requests from a session's tools to the people watching it.

The terminal's approval gate (``hermes.tools.approval.decide``) calls
``ApprovalBroker.ask``: the request is published as an ``ApprovalRequested``
event and waits for ``respond(request_id, choice)`` from any attached surface.
The gate bounds the wait (no answer means deny). With no subscriber that
attached as an approver, the session hands the gate no callback at all, so a
dangerous command is denied as unattended.
"""

from __future__ import annotations

from typing import Any

import attrs
import trio
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from hermes.tools import ApprovalCallback, ApprovalChoice, ApprovalRequest

from .errors import InvalidInput, UnknownApproval
from .events import ApprovalRequested, ApprovalResolved, EventHub


@attrs.define(slots=True)
class _Pending:
    request: ApprovalRequest
    done: trio.Event = attrs.field(factory=trio.Event)
    choice: ApprovalChoice = ApprovalChoice.DENY


class ApprovalBroker:
    """Pending approval requests of one session, by id."""

    def __init__(self, hub: EventHub, timeout: float, *, unattended: bool = False) -> None:
        self.hub = hub
        self.timeout = timeout
        self.unattended = unattended
        """Nobody may answer (a subagent): the tools always get no callback."""
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self.turn = 0

    def callback(self) -> ApprovalCallback | None:
        """What the tools get: ``None`` (unattended) when no approver is attached."""
        return self.ask if self.hub.approvers and not self.unattended else None

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        self._next_id += 1
        request_id = self._next_id
        pending = _Pending(request)
        self._pending[request_id] = pending
        self.hub.publish(
            ApprovalRequested(
                self.turn,
                request_id,
                request.call_id,
                request.command,
                request.reasons,
                self.timeout,
                dict(request.form.schema) if request.form is not None else None,
            )
        )
        try:
            await pending.done.wait()
            return pending.choice
        finally:
            self._pending.pop(request_id, None)
            if not pending.done.is_set():  # the gate stopped waiting (timeout): a denial
                self.hub.publish(ApprovalResolved(request_id, ApprovalChoice.DENY.value))

    def respond(
        self, request_id: int, choice: ApprovalChoice, content: dict[str, Any] | None = None
    ) -> None:
        """Answer a request; ``content``: a form request's typed answer (checked, or refused)."""
        pending = self._pending.get(request_id)
        if pending is None or pending.done.is_set():
            waiting = ", ".join(str(i) for i in self._pending) or "none"
            raise UnknownApproval(
                f"no approval request {request_id} is waiting (waiting: {waiting})"
            )
        if content is not None:
            form = pending.request.form
            if form is None:
                raise InvalidInput(f"approval request {request_id} asks no form: send no content")
            if choice is ApprovalChoice.DENY:
                raise InvalidInput("content answers a form with an approval, not with deny")
            problems = sorted(Draft202012Validator(dict(form.schema)).iter_errors(content), key=str)
            if problems:
                where = "/".join(str(p) for p in problems[0].absolute_path) or "content"
                raise InvalidInput(
                    f"content does not fit approval request {request_id}'s form: "
                    f"{where}: {problems[0].message[:300]} (the request still waits)"
                )
            form.content = dict(content)
        pending.choice = choice
        pending.done.set()
        self.hub.publish(ApprovalResolved(request_id, choice.value))

    def deny_all(self) -> int:
        """Answer every waiting request with deny (the turn is stopping); returns how many."""
        count = 0
        for request_id, pending in list(self._pending.items()):
            if not pending.done.is_set():
                pending.choice = ApprovalChoice.DENY
                pending.done.set()
                self.hub.publish(ApprovalResolved(request_id, ApprovalChoice.DENY.value))
                count += 1
        return count

    @property
    def waiting(self) -> tuple[int, ...]:
        return tuple(self._pending)
