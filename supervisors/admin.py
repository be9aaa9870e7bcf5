"""Runtime administration of supervisors: request messages and a typed client.

Errors never crash the supervisor: its handlers return a ``Failure`` value and
the client raises the error in the caller.
"""

from __future__ import annotations

from typing import Any

import attrs

from actors import ActorRef

from .handle import ChildHandle
from .spec import ChildSpec, ChildType


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
class StartChild:
    """Static supervisor: ``spec``. Dynamic supervisor: ``args`` for the template, ``name``."""

    spec: ChildSpec | None = None
    args: tuple[Any, ...] = ()
    name: str | None = None


@attrs.frozen(slots=True)
class TerminateChild:
    child: str | ActorRef | ChildHandle


@attrs.frozen(slots=True)
class RestartChild:
    child_id: str


@attrs.frozen(slots=True)
class DeleteChild:
    child_id: str


@attrs.frozen(slots=True)
class WhichChildren:
    pass


@attrs.frozen(slots=True)
class CountChildren:
    pass


@attrs.frozen(slots=True)
class GetChildSpec:
    child_id: str


@attrs.frozen(slots=True)
class GetChild:
    child_id: str


def unwrap(result: Any) -> Any:
    """Raise a ``Failure``'s error; pass anything else through."""
    if isinstance(result, Failure):
        raise result.error
    return result


class SupervisorClient:
    """Typed calls to a supervisor (static or dynamic) behind ``ref``."""

    def __init__(self, ref: ActorRef, timeout: float | None = None) -> None:
        self.ref = ref
        self.timeout = timeout

    async def _call(self, request: Any, timeout: float | None = None) -> Any:
        return unwrap(await self.ref.call(request, timeout=timeout or self.timeout))

    async def start_child(
        self,
        spec: ChildSpec | None = None,
        *args: Any,
        name: str | None = None,
        timeout: float | None = None,
    ) -> ChildHandle | None:
        """Start a child: a spec (static) or template args (dynamic). None if it returned IGNORE."""
        handle: ChildHandle | None = await self._call(StartChild(spec, args, name), timeout)
        return handle

    async def terminate_child(self, child: str | ActorRef | ChildHandle) -> None:
        """Stop a child per its shutdown spec; idempotent; keeps the spec unless temporary."""
        await self._call(TerminateChild(child))

    async def restart_child(self, child_id: str) -> ChildHandle | None:
        handle: ChildHandle | None = await self._call(RestartChild(child_id))
        return handle

    async def delete_child(self, child_id: str) -> None:
        await self._call(DeleteChild(child_id))

    async def which_children(self) -> list[ChildInfo]:
        children: list[ChildInfo] = await self._call(WhichChildren())
        return children

    async def count_children(self) -> ChildCounts:
        counts: ChildCounts = await self._call(CountChildren())
        return counts

    async def get_childspec(self, child_id: str) -> ChildSpec:
        spec: ChildSpec = await self._call(GetChildSpec(child_id))
        return spec

    async def child(self, child_id: str) -> ChildHandle:
        """The stable handle of a child (messages to it survive restarts)."""
        handle: ChildHandle = await self._call(GetChild(child_id))
        return handle
