"""``SessionsView``: running sessions looked up without a call to the manager."""

from __future__ import annotations

from typing import Any, cast

import pytest

from hermes.daemon.errors import UnknownSession
from hermes.daemon.manager import Entry, Failed, Lookup, ManagerClient
from hermes.daemon.sessions_view import SessionsView


class Ref:
    """Stands in for the manager's ref: records the calls, answers ``answer``."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.calls: list[object] = []

    async def call(self, message: object, timeout: float | None = None) -> object:
        self.calls.append(message)
        return self.answer


def entry(session_id: str) -> Entry:
    path = f"/daemon/sessions/sup/session-{session_id}"
    return Entry(session_id, cast(Any, None), cast(Any, None), path)


async def test_a_running_session_is_answered_by_the_view_without_a_call() -> None:
    running = {"s-1": entry("s-1")}
    view = SessionsView()
    view.attach(running.get)
    ref = Ref(entry("from-the-manager"))
    client = ManagerClient(ref, view=view)
    assert await client.lookup("s-1") is running["s-1"]
    assert ref.calls == []
    # Anything else (not running, unknown, closed) is the manager's to answer.
    assert (await client.lookup("s-2")).session_id == "from-the-manager"
    assert ref.calls == [Lookup("s-2")]


async def test_without_a_manager_attached_every_lookup_is_a_call() -> None:
    ref = Ref(Failed(UnknownSession("no session s-9")))
    client = ManagerClient(ref, view=SessionsView())
    with pytest.raises(UnknownSession, match="s-9"):
        await client.lookup("s-9")
    assert ref.calls == [Lookup("s-9")]


def test_a_stopping_manager_detaches_only_its_own_lookup() -> None:
    view = SessionsView()
    old: dict[str, Entry] = {"s-1": entry("s-1")}
    new: dict[str, Entry] = {"s-2": entry("s-2")}
    view.attach(old.get)
    view.attach(new.get)  # a restarted manager attached before the old one stopped
    view.detach(old.get)
    assert view.running("s-2") is new["s-2"]
    view.detach(new.get)
    assert view.running("s-2") is None


async def test_the_status_is_read_through_the_view_until_the_manager_detaches() -> None:
    view = SessionsView()
    status = {"model": "m", "sessions_running": 3}
    running: dict[str, Entry] = {}
    view.attach(running.get, lambda: status)
    ref = Ref({"model": "m", "sessions_running": 0, "from": "the manager"})
    client = ManagerClient(ref, view=view)
    assert await client.status() is status
    assert ref.calls == []  # no call: a status probe never waits in the manager's mailbox
    view.detach(running.get)
    assert (await client.status())["from"] == "the manager"
    assert [type(m).__name__ for m in ref.calls] == ["Status"]
