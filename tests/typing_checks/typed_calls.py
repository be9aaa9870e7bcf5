"""Checked by mypy (``tests/actors/test_typed_calls.py``), never run: the reply types of calls.

Each ``assert_type`` states what ``await target.call(request)`` is typed under
``mypy --strict``; a request that is not a ``Call`` still gives ``Any``.
"""

from __future__ import annotations

from typing import Any, assert_type

import attrs

from actors import ActorRef, Call, CallTarget
from hermes.daemon.manager import Entry, Lookup, ManagerClient, Running, Status
from hermes.daemon.providers import GetProviders, Providers
from hermes.daemon.surface import GetAddress as GatewayAddress
from hermes.processes import ProcessService
from hermes.processes.messages import Kill, Route, Routed, Write
from hermes.processes.state import PollResult, ProcessInfo
from hermes.session import SessionHandle
from hermes.session.events import EventHub
from hermes.session.messages import Accepted, GetHub, Prompt, Refused, SessionState, Steer
from hermes.session.outcome import TurnResult
from hermes.store import SessionInfo, StoreClient, Transcript
from hermes.store.event_queries import LastEventSeq, ReadEvents, StoredEvent
from hermes.store.requests import EndSessions, GetSession, LoadSession
from hermes.subagents.messages import Delegate
from hermes.subagents.results import BatchResult, DelegationStarted
from supervisors import ChildCounts, ChildHandle, ChildInfo, ChildSpec, SupervisorClient
from supervisors._admin import Failure, GetChild, StartChild, WhichChildren


@attrs.frozen(slots=True)
class GetAddress(Call[tuple[str, int]]):
    pass


@attrs.frozen(slots=True)
class Add(Call[int]):
    n: int


async def actors_calls(ref: ActorRef, handle: ChildHandle, target: CallTarget) -> None:
    assert_type(await ref.call(GetAddress()), tuple[str, int])
    assert_type(await ref.call(Add(1), timeout=2.0), int)
    assert_type(await handle.call(Add(1)), int)
    assert_type(await target.call(GetAddress()), tuple[str, int])
    assert_type(await ref.call("untyped"), Any)
    assert_type(await handle.call(("untyped", 1)), Any)


async def supervisor_calls(ref: ActorRef, client: SupervisorClient, spec: ChildSpec) -> None:
    assert_type(await ref.call(WhichChildren()), list[ChildInfo] | Failure)
    assert_type(await ref.call(GetChild("a")), ChildHandle | Failure)
    assert_type(await ref.call(StartChild(spec)), ChildHandle | None | Failure)
    assert_type(await client.which_children(), list[ChildInfo])
    assert_type(await client.count_children(), ChildCounts)
    assert_type(await client.child("a"), ChildHandle)
    assert_type(await client.start_child(spec), ChildHandle | None)


async def store_calls(ref: ActorRef, store: StoreClient) -> None:
    assert_type(await ref.call(GetSession("s")), SessionInfo)
    assert_type(await store.request(LoadSession("s")), Transcript)
    assert_type(await store.request(ReadEvents("s", after=0)), list[StoredEvent])
    assert_type(await store.request(LastEventSeq("s")), int)
    assert_type(await store.request(EndSessions(("s",), "done")), tuple[str, ...])
    assert_type(await store.list_sessions(), list[SessionInfo])


async def session_calls(ref: ActorRef, session: SessionHandle) -> None:
    assert_type(await ref.call(Steer("x")), Accepted | Refused)
    assert_type(await ref.call(Prompt("x")), Accepted | TurnResult | Refused)
    assert_type(await ref.call(GetHub()), EventHub)
    assert_type(await session.prompt("x"), Accepted)
    assert_type(await session.run("x"), TurnResult)
    assert_type(await session.state(), SessionState)
    assert_type(await session.set_yolo(True), bool)


async def daemon_calls(ref: ActorRef, manager: ManagerClient, processes: ProcessService) -> None:
    assert_type(await ref.call(GatewayAddress()), tuple[str, int])
    assert_type(await ref.call(GetProviders()), Providers)
    assert_type(await manager.call(Running()), list[Entry])
    assert_type(await manager.call(Lookup("s")), Entry)
    assert_type(await manager.lookup("s"), Entry)
    assert_type(await manager.call(Status()), dict[str, Any])
    assert_type(await ref.call(Route("p")), Routed)
    assert_type(await ref.call(Kill()), ProcessInfo)
    assert_type(await ref.call(Write(b"x")), int)
    assert_type(await processes.poll("p"), PollResult)
    assert_type(await processes.write("p", "x"), int)


async def one_shot_calls(ref: ActorRef) -> None:
    assert_type(await ref.call(Delegate("d", ())), BatchResult | DelegationStarted | Refused)
