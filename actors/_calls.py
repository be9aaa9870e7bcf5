"""Typed requests: a message class declares the type of its reply.

A request class inherits ``Call[R]`` (attrs frozen slots classes can)::

    @attrs.frozen(slots=True)
    class GetAddress(Call[tuple[str, int]]):
        pass

and ``await ref.call(GetAddress())`` is then typed ``tuple[str, int]`` under
``mypy --strict``; a message that is not a ``Call`` still gets ``Any``. The type
is a promise the handler makes and nothing checks it at run time.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar, overload

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Call(Generic[R_co]):
    """Base of a request whose reply has type ``R_co``; adds no state (empty slots)."""

    __slots__ = ()


class CallTarget(Protocol):
    """Anything that takes a call: an ``ActorRef``, a supervisor's ``ChildHandle``."""

    @overload
    async def call(self, message: Call[R], timeout: float | None = None) -> R: ...
    @overload
    async def call(self, message: object, timeout: float | None = None) -> Any: ...
