"""The store's operations are declared once: a request type and its registered function."""

from __future__ import annotations

import importlib
import math
import pkgutil
from typing import Any, ClassVar

import apsw
import attrs
import pytest
import trio

import hermes.store
from hermes.model.types import Message
from hermes.store import InvalidRequest, Request, StoreClient
from hermes.store.operations import Abort, operation, operation_for, operations
from hermes.store.requests import Read, SideWrite
from hermes.store.session_queries import session_row

# -- an operation declared here, in one place, as a new one would be ------------------


@attrs.frozen(slots=True)
class CountMessages(Read[int]):
    """How many messages a session has (test-only)."""

    op: ClassVar[str] = "count_messages"

    session_id: str


@operation(CountMessages)
def count_messages(conn: apsw.Connection, req: CountMessages, abort: Abort) -> int:
    return session_row(conn, req.op, req.session_id).message_count


@attrs.frozen(slots=True)
class NoteSeen(SideWrite[str]):
    """Records nothing; answers its note (test-only): a write beside the transcripts."""

    op: ClassVar[str] = "note_seen"

    note: str


@operation(NoteSeen)
def note_seen(conn: apsw.Connection, req: NoteSeen, abort: Abort) -> str:
    if not req.note:
        raise InvalidRequest(req.op, "note must be a non-empty str")
    return req.note


@attrs.frozen(slots=True)
class Unregistered(Request[None]):
    op: ClassVar[str] = "unregistered"


def _store_modules() -> list[str]:
    return [
        importlib.import_module(f"hermes.store.{info.name}").__name__
        for info in pkgutil.iter_modules(hermes.store.__path__)
    ]


def _concrete(kind: type[Any]) -> list[type[Request[Any]]]:
    found: list[type[Request[Any]]] = []
    for sub in kind.__subclasses__():
        found.extend(_concrete(sub))
        if sub not in (Read, SideWrite):
            found.append(sub)
    return found


def test_every_request_type_of_the_store_has_exactly_one_operation() -> None:
    modules = set(_store_modules())
    declared = {kind for kind in _concrete(Request) if kind.__module__ in modules}
    assert len(declared) >= 35  # sessions, transcripts, processes, delegations, events, ...
    registered = operations()
    missing = sorted(kind.__name__ for kind in declared if kind not in registered)
    assert missing == []
    for kind, op in registered.items():
        assert op.request is kind
        assert kind.op != "request", f"{kind.__name__} names no op"


def test_a_second_function_for_a_request_type_is_refused() -> None:
    with pytest.raises(TypeError, match=r"CountMessages already runs with .*count_messages"):

        @operation(CountMessages)
        def again(conn: apsw.Connection, req: CountMessages, abort: Abort) -> int:
            return 0

    assert operation_for(CountMessages("s")) is not None
    assert operation_for(CountMessages("s")).run is count_messages  # type: ignore[union-attr]


def test_only_a_request_type_can_be_registered() -> None:
    with pytest.raises(TypeError, match="takes a Request subclass, got 'GetYolo'"):
        operation("GetYolo")  # type: ignore[arg-type]


def test_the_shapes_carry_what_the_store_needs() -> None:
    assert not CountMessages.writes and CountMessages("s").deadline == math.inf
    assert NoteSeen.writes and not NoteSeen.moves_tails
    assert Unregistered.writes and Unregistered.moves_tails


async def test_an_operation_declared_in_one_place_is_served(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(info.id, Message.user("one"), expected_seq=0)
        assert await store.request(CountMessages(info.id)) == 1
        assert await store.request(NoteSeen("seen")) == "seen"
        with pytest.raises(InvalidRequest, match="store note_seen failed: note must be"):
            await store.request(NoteSeen(""))


async def test_a_request_without_an_operation_is_an_invalid_request(store: StoreClient) -> None:
    with trio.fail_after(10):
        with pytest.raises(InvalidRequest, match="no handler for Unregistered"):
            await store.request(Unregistered())
        assert (await store.create_session(model="m")).id  # the store keeps serving
