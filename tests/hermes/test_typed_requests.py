"""hermes's typed requests (``Call[R]`` subclasses) are still plain frozen slotted attrs values."""

from __future__ import annotations

import math

import attrs
import pytest

from actors import Call
from hermes.daemon.manager import Lookup, Running
from hermes.daemon.providers import GetProviders
from hermes.daemon.surface import GetAddress
from hermes.processes.messages import Kill, Write
from hermes.session.messages import Prompt, Steer
from hermes.store.event_queries import ReadEvents
from hermes.store.requests import GetSession, Request


def test_store_requests_are_typed_calls_and_frozen_slotted_values() -> None:
    get = GetSession("s1")
    assert isinstance(get, Request) and isinstance(get, Call)
    assert get == GetSession("s1") and get != GetSession("s2")
    assert hash(get) == hash(GetSession("s1"))
    assert not hasattr(get, "__dict__")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        get.session_id = "s2"  # type: ignore[misc]
    read = ReadEvents("s1", after=3)
    later = attrs.evolve(read, deadline=10.0)  # what the client does to a read
    assert later.deadline == 10.0 and read.deadline == math.inf and later.after == 3
    assert GetSession.op == "get_session" and not GetSession.writes


def test_session_requests_are_typed_calls_and_frozen_slotted_values() -> None:
    steer = Steer("left")
    assert isinstance(steer, Call) and steer == Steer("left") and steer != Steer("right")
    assert not hasattr(steer, "__dict__")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        steer.text = "right"  # type: ignore[misc]
    assert Prompt("hi", wait=True) == Prompt("hi", None, True)


def test_daemon_and_process_requests_are_typed_calls_and_frozen_slotted_values() -> None:
    for request in (GetAddress(), Lookup("s1"), Running(), Kill(), Write(b"x"), GetProviders()):
        assert isinstance(request, Call)
        assert request == type(request)(*attrs.astuple(request, recurse=False))
        assert not hasattr(request, "__dict__")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Lookup("s1").session_id = "s2"  # type: ignore[misc]
