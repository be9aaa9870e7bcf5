"""The store's operations, declared once: each query function registered by its request type.

A query module declares an operation by decorating its function with the
request it answers::

    @operation(GetYolo)
    def get_yolo(conn: apsw.Connection, req: GetYolo, abort: Abort) -> bool: ...

``run_request`` (``queries.py``) finds a request's function here, and callers
send the request with ``StoreClient.request`` (typed by ``Request[R]``), so
adding an operation is its request class and its decorated function: no
handler table, client method or actor branch to add. ``operation`` checks
that the function's return type is the request's reply type (mypy) and that a
request type is registered once (at import). ``queries.py`` imports every
query module, so all of them are registered before the store serves anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import apsw
import attrs

from .errors import RequestAborted
from .requests import Request

R = TypeVar("R")
Q = TypeVar("Q", bound=Request[Any])


class Abort:
    """Set from the event loop when the store stopped waiting for a request.

    SQLite's progress handler stops a statement that is running; this flag stops
    the Python work between statements (validating, encoding, decoding a batch).
    Either way the request raises and its transaction is rolled back.
    """

    __slots__ = ("requested",)

    def __init__(self) -> None:
        self.requested = False

    def set(self) -> None:
        self.requested = True

    def check(self, op: str) -> None:
        if self.requested:
            raise RequestAborted(op, "the store stopped waiting for this request")


@attrs.frozen(slots=True)
class Operation:
    """One registered operation: its request type and the function that runs it."""

    request: type[Request[Any]]
    run: Callable[..., Any]
    """``run(conn, request, abort)``, or with ``tails`` also ``run(..., tails)``."""
    tails: bool = False
    """The function keeps the connection's ``TailCache`` itself (appends); for any
    other write that ``moves_tails`` the session's entry is forgotten first."""


_OPERATIONS: dict[type[Request[Any]], Operation] = {}


def operation(
    kind: type[Request[R]], *, tails: bool = False
) -> Callable[[Callable[[apsw.Connection, Q, Abort], R]], Callable[[apsw.Connection, Q, Abort], R]]:
    """Register the decorated function as the one that runs ``kind`` requests.

    ``tails``: the function takes the connection's ``TailCache`` as a fourth
    argument (see ``Operation.tails``). A second function for the same request
    type is a ``TypeError`` naming both.
    """
    if not (isinstance(kind, type) and issubclass(kind, Request)):
        raise TypeError(f"operation() takes a Request subclass, got {kind!r}")

    def register(
        run: Callable[[apsw.Connection, Q, Abort], R],
    ) -> Callable[[apsw.Connection, Q, Abort], R]:
        known = _OPERATIONS.get(kind)
        if known is not None:
            raise TypeError(
                f"{kind.__name__} already runs with {known.run.__module__}.{known.run.__name__}; "
                f"{run.__module__}.{getattr(run, '__name__', run)} cannot register it again"
            )
        _OPERATIONS[kind] = Operation(kind, run, tails)
        return run

    return register


def operation_for(request: Request[Any]) -> Operation | None:
    """The registered operation of ``request``'s type, or None."""
    return _OPERATIONS.get(type(request))


def operations() -> dict[type[Request[Any]], Operation]:
    """Every registered operation, by request type (a copy)."""
    return dict(_OPERATIONS)
