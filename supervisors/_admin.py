"""Runtime administration of supervisors: request messages and a typed client.

Errors never crash the supervisor: its handlers return a ``Failure`` value and
the client raises the error in the caller. The operations (start, terminate,
restart, delete) wait for their outcome however long it takes, as OTP's
``infinity``, unless the caller passes a timeout.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

import attrs

from actors import ActorRef, Call

from ._handle import ChildHandle
from ._spec import ChildSpec, ChildType

T = TypeVar("T")


@attrs.frozen(slots=True)
class Failure:
    """An error to raise in the caller of an admin request."""

    error: BaseException


@attrs.frozen(slots=True)
class ChildInfo:
    """One row of ``which_children``."""

    id: str
    ref: ActorRef | None
    state: str
    """``running``, ``restarting`` or ``stopped`` (OTP's pid / restarting / undefined)."""
    type: ChildType
    restarts: int


@attrs.frozen(slots=True)
class ChildCounts:
    specs: int
    active: int
    supervisors: int
    workers: int


@attrs.frozen(slots=True)
class StartChild(Call[ChildHandle | None | Failure]):
    """Static supervisor: ``spec``. Dynamic supervisor: ``args`` for the template, ``name``."""

    spec: ChildSpec | None = None
    args: tuple[Any, ...] = ()
    name: str | None = None


@attrs.frozen(slots=True)
class TerminateChild(Call[None | Failure]):
    child: str | ActorRef | ChildHandle


@attrs.frozen(slots=True)
class RestartChild(Call[ChildHandle | None | Failure]):
    child_id: str


@attrs.frozen(slots=True)
class DeleteChild(Call[None | Failure]):
    child_id: str


@attrs.frozen(slots=True)
class WhichChildren(Call[list[ChildInfo] | Failure]):
    pass


@attrs.frozen(slots=True)
class CountChildren(Call[ChildCounts | Failure]):
    pass


@attrs.frozen(slots=True)
class GetChildSpec(Call[ChildSpec | Failure]):
    child: str | ActorRef | ChildHandle


@attrs.frozen(slots=True)
class GetChild(Call[ChildHandle | Failure]):
    child_id: str


def unwrap(result: T | Failure) -> T:
    """Raise a ``Failure``'s error; pass anything else through."""
    if isinstance(result, Failure):
        raise result.error
    return result


class SupervisorClient:
    """Typed calls to a supervisor (static or dynamic) behind ``ref``.

    ``timeout`` bounds every call made through this client; without it the
    operations wait for their outcome (OTP's ``infinity``) and the queries use
    the actor system's call timeout. A ``timeout`` passed to one operation wins.
    """

    def __init__(self, ref: ActorRef, timeout: float | None = None) -> None:
        self.ref = ref
        self.timeout = timeout

    async def _call(self, request: Call[T | Failure], timeout: float | None = None) -> T:
        """A query: bounded by ``timeout``, the client's, or the system's call timeout."""
        return unwrap(await self.ref.call(request, timeout=_first(timeout, self.timeout)))

    async def _operate(self, request: Call[T | Failure], timeout: float | None) -> T:
        """An operation: waits for its outcome unless a timeout is given."""
        limit = _first(timeout, self.timeout)
        return unwrap(await self.ref.call(request, timeout=math.inf if limit is None else limit))

    async def start_child(
        self,
        spec: ChildSpec | None = None,
        *args: Any,
        name: str | None = None,
        timeout: float | None = None,
    ) -> ChildHandle | None:
        """Start a child: a spec (static) or template args (dynamic). None if it returned IGNORE."""
        return await self._operate(StartChild(spec, args, name), timeout)

    async def terminate_child(
        self, child: str | ActorRef | ChildHandle, *, timeout: float | None = None
    ) -> None:
        """Stop a child per its shutdown spec; keeps the spec unless temporary.

        Idempotent: a child already gone (an exited incarnation's ref, a
        handle, or the id of a forgotten child) is ``ok``; ``ChildNotFound``
        only for something that never was this supervisor's child.
        """
        await self._operate(TerminateChild(child), timeout)

    async def restart_child(
        self, child_id: str, *, timeout: float | None = None
    ) -> ChildHandle | None:
        return await self._operate(RestartChild(child_id), timeout)

    async def delete_child(self, child_id: str, *, timeout: float | None = None) -> None:
        await self._operate(DeleteChild(child_id), timeout)

    async def which_children(self) -> list[ChildInfo]:
        return await self._call(WhichChildren())

    async def count_children(self) -> ChildCounts:
        return await self._call(CountChildren())

    async def get_childspec(self, child: str | ActorRef | ChildHandle) -> ChildSpec:
        """The spec of a child, by id, ref or handle."""
        return await self._call(GetChildSpec(child))

    async def child(self, child_id: str) -> ChildHandle:
        """The stable handle of a child (messages to it survive restarts)."""
        return await self._call(GetChild(child_id))


def _first(*timeouts: float | None) -> float | None:
    return next((t for t in timeouts if t is not None), None)
