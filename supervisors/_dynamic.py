"""``DynamicSupervisor``: children from one template, started at runtime.

OTP's simple_one_for_one: every child is made from the template spec plus
the extra arguments given to ``start_child``; children are restarted one for
one per the template's restart type; on shutdown they are stopped all at
once, so it takes about the slowest child's time, not the sum. With
``max_children``, starts beyond the limit are rejected or wait in a bounded
admission queue and start in order as slots free up.
"""

from __future__ import annotations

import enum
import itertools
from collections import deque
from typing import Any

import attrs

from actors import NotRunning, Reply, is_count

from . import _admin as admin
from ._admin import Failure
from ._errors import ChildNotFound, SpecError, TooManyChildren
from ._spec import ChildSpec, Restart, Strategy, SupervisorFlags
from ._supervisor import Supervisor, _Child


class Admission(enum.Enum):
    REJECT = "reject"
    """At the limit, ``start_child`` fails with ``TooManyChildren``."""
    QUEUE = "queue"
    """At the limit, ``start_child`` waits in a bounded queue (a caller's timeout still applies)."""


@attrs.frozen(slots=True)
class _Queued:
    spec: ChildSpec
    reply: Reply


class DynamicSupervisor(Supervisor):
    """One template, many children; see the module docstring."""

    stop_children_concurrently = True

    def __init__(
        self,
        template: ChildSpec,
        *,
        intensity: int = 1,
        period: float = 5.0,
        max_children: int | None = None,
        admission: Admission = Admission.REJECT,
        queue_capacity: int = 100,
        backoff: Any = None,
    ) -> None:
        if not isinstance(template, ChildSpec):
            raise SpecError(f"invalid template: {template!r} (expected a ChildSpec)")
        if template.significant:
            raise SpecError("invalid template significant: True (dynamic supervisors have none)")
        if max_children is not None and (not is_count(max_children) or max_children < 1):
            raise SpecError(f"invalid max_children: {max_children!r} (expected None or int >= 1)")
        if not isinstance(admission, Admission):
            raise SpecError(f"invalid admission: {admission!r} (expected an Admission)")
        if not is_count(queue_capacity) or queue_capacity < 1:
            raise SpecError(f"invalid queue_capacity: {queue_capacity!r} (expected int >= 1)")
        flags = SupervisorFlags(
            strategy=Strategy.ONE_FOR_ONE, intensity=intensity, period=period, backoff=backoff
        )
        super().__init__((), flags)
        self.template = template
        self.max_children = max_children
        self.admission = admission
        self.queue_capacity = queue_capacity
        self._queue: deque[_Queued] = deque()
        self._names = itertools.count(1)

    # -- admission -------------------------------------------------------------------

    def _live(self) -> int:
        return len(self._children)

    def _at_limit(self) -> bool:
        return self.max_children is not None and self._live() >= self.max_children

    async def _admin_start(self, request: admin.StartChild) -> Any:
        if request.spec is not None:
            return Failure(SpecError("a dynamic supervisor starts children from its template"))
        name = (
            request.name if request.name is not None else f"{self.template.id}-{next(self._names)}"
        )
        if name in self._children:
            return Failure(SpecError(f"invalid child name: {name!r} (already in use)"))
        try:
            spec = attrs.evolve(self.template, id=name, args=self.template.args + request.args)
        except SpecError as exc:
            return Failure(exc)
        if not self._at_limit():
            return await self._start_new(spec)
        assert self.max_children is not None
        if self.admission is Admission.REJECT:
            return Failure(TooManyChildren(self.ctx.path, self.max_children))
        if len(self._queue) >= self.queue_capacity:
            return Failure(TooManyChildren(self.ctx.path, self.max_children, len(self._queue)))
        self._queue.append(_Queued(spec, self.ctx.defer_reply()))
        return None

    async def _admit(self) -> None:
        """Start queued requests, in order, while there is room."""
        while self._queue and not self._at_limit():
            queued = self._queue.popleft()
            if queued.reply.caller_gave_up:
                continue  # its call timed out while queued: start nothing for it
            if queued.spec.id in self._children:
                queued.reply.send(Failure(SpecError(f"child name {queued.spec.id!r} in use")))
                continue
            result = await self._start_new(queued.spec)
            queued.reply.send(result)

    @property
    def queued(self) -> int:
        """Start requests waiting for a slot."""
        return len(self._queue)

    # -- hooks -----------------------------------------------------------------------

    async def receive(self, message: Any) -> Any:
        result = await super().receive(message)
        if self._queue and not self._at_limit() and not self._giving_up:
            await self._admit()
        return result

    def _after_not_restarted(self, child: _Child) -> None:
        # Dynamic children are forgotten once they stop for good (OTP s1f1).
        self._forget(child)

    def _after_terminate(self, child: _Child) -> None:
        self._forget(child)

    def _after_ignored(self, child: _Child) -> None:
        # A restart that returned IGNORE: removed, its name (and slot) freed.
        self._forget(child)

    def _spec_count(self) -> int:
        return 1  # the template (OTP's simple_one_for_one)

    async def _admin_restart(self, request: admin.RestartChild) -> Any:
        if request.child_id not in self._children:
            return Failure(ChildNotFound(request.child_id))
        return Failure(SpecError("restart_child is not supported by a dynamic supervisor"))

    async def on_stop(self, reason: Any) -> None:
        for queued in self._queue:
            queued.reply.send(Failure(NotRunning(f"supervisor {self.ctx.path} is stopping")))
        self._queue.clear()
        await super().on_stop(reason)


__all__ = ["Admission", "DynamicSupervisor", "Restart"]
