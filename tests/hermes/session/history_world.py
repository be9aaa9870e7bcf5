"""``test_valid_history``'s world: a supervised session on a real store (itself
supervised, so a crash action can take it down) and the fake provider, with every
write the store refused noted (``RecordingStore``). ``test_history_crashes`` uses it too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs

from actors import ActorRef, ActorSystem, open_system
from hermes.fake import FakeProvider
from hermes.model import ModelClient
from hermes.model.policy import StalePolicy
from hermes.session import SessionActor, SessionConfig, SessionDeps, SessionHandle
from hermes.session.messages import GetHub
from hermes.store import InvalidTranscript, SeqConflict, StoreActor, StoreClient
from hermes.tools import default_registry
from supervisors import ChildHandle, ChildSpec, Supervisor, SupervisorClient

from ..fake_model import KEY, fast_retry, open_fake

MODEL = "claude-test"
SESSION_ID = "valid-history"


class InjectedCrash(Exception):
    """The error our crash actions kill actors with (told apart from real crashes)."""


class RecordingStore:
    """The real store actor, with every write it refused as invalid noted on the way back.

    Not a mock: each request goes to the ``StoreActor`` and its answer comes back
    unchanged. A refused write (``InvalidTranscript``, or ``SeqConflict``: a writer
    whose view of the transcript is stale) is history corruption attempted, even
    when the writer swallows the error (a turn's settle does).
    """

    def __init__(self, target: ChildHandle) -> None:
        self.target = target
        self.refused: list[str] = []

    async def call(self, message: Any, timeout: float | None = None) -> Any:
        try:
            return await self.target.call(message, timeout=timeout)
        except (InvalidTranscript, SeqConflict) as error:
            self.refused.append(f"{type(error).__name__}: {error}")
            raise


@attrs.define
class World:
    system: ActorSystem
    fake: FakeProvider
    store: StoreClient
    sup: ActorRef
    child: ChildHandle
    handle: SessionHandle
    incarnations: list[SessionActor]
    workdir: Path
    recorder: RecordingStore
    store_child: ChildHandle


@asynccontextmanager
async def open_world(
    directory: Path,
    prepare: Callable[[StoreClient], Awaitable[None]] | None = None,
    *,
    kill_grace: float = 1.0,
) -> AsyncIterator[World]:
    """A supervised session on a real store and the fake provider; torn down on exit.

    ``prepare`` runs on the store before the session first starts.
    """
    workdir = directory / "work"
    workdir.mkdir()
    (workdir / "a.txt").write_text("alpha\nbeta\n")
    retry = fast_retry(3, deadline=10)
    stale = StalePolicy(base=0.3, large=0.3, huge=0.3)
    async with (
        open_fake() as fake,
        ModelClient(
            api_key=KEY, base_url=fake.base_url, retry=retry, stale=stale, trust_env=False
        ) as client,
        open_system("valid-history", kill_grace=kill_grace, call_timeout=5.0) as system,
    ):
        # The store is supervised too, so that a crash action can take it down.
        store_sup = await system.spawn(
            Supervisor(
                [ChildSpec("store", StoreActor, args=(directory / "data",))],
                intensity=100,
                period=1.0,
            ),
            name="stores",
        )
        store_child = await SupervisorClient(store_sup).child("store")
        recorder = RecordingStore(store_child)
        store = StoreClient(recorder, timeout=5.0)
        if prepare is not None:
            await prepare(store)
        config = SessionConfig(
            model=MODEL,
            cwd=workdir,
            spill_dir=directory / "spill",
            load_context_files=False,
            call_timeout=5.0,
            max_iterations=3,  # small enough for a scripted turn to spend it
        )
        deps = SessionDeps(store=store, client=client, registry=default_registry())
        incarnations: list[SessionActor] = []

        def make_session() -> SessionActor:
            actor = SessionActor(config, deps, SESSION_ID)
            incarnations.append(actor)
            return actor

        sup = await system.spawn(
            Supervisor([ChildSpec("session", make_session)], intensity=100, period=1.0),
            name="sessions",
        )
        child = await SupervisorClient(sup).child("session")
        hub = await child.call(GetHub(), timeout=10)
        handle = SessionHandle(child, hub, timeout=10)
        yield World(
            system, fake, store, sup, child, handle, incarnations, workdir, recorder, store_child
        )
