"""Board fixtures: the shared store, fake and client (one attempt), real worker sessions.

Worker sessions run on ``claude-test`` (the queue answers them); the auxiliary
model (judge, specify, decompose) is ``kanban-aux``, answered by rules on that
model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from actors import ActorContext, ActorRef, ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.kanban import (
    Board,
    BoardDeps,
    GetCard,
    HandleWorker,
    KanbanClient,
    KanbanSettings,
    WorkerSession,
)
from hermes.model import ModelClient
from hermes.session import SessionConfig, SessionDeps, start_session
from hermes.store import StoreClient
from hermes.store.kanban_queries import Card
from hermes.tools import Tool, ToolRegistry, default_registry

WORKER = "claude-test"
AUX = "kanban-aux"


@pytest.fixture
def retry_attempts() -> int:
    """One attempt: a failed request fails at once."""
    return 1


def verdict(word: str, reason: str) -> Reply:
    return Reply.of(ToolUse("verdict", {"verdict": word, "reason": reason}))


def aux_says(fake: FakeProvider, *replies: Reply) -> None:
    for reply in replies:
        fake.when(reply, model=AUX, times=1)


@attrs.define
class Opened:
    sessions: list[str] = attrs.Factory(list)
    closed: list[str] = attrs.Factory(list)


BoardFactory = Callable[..., Awaitable[tuple[ActorRef, KanbanClient, Opened]]]


@pytest.fixture
def open_board(
    system: ActorSystem,
    store: StoreClient,
    client: ModelClient,
    workdir: Path,
    tmp_path: Path,
) -> BoardFactory:
    """Start a board; keyword arguments override ``KanbanSettings`` fields."""
    opened = Opened()

    async def open_worker(card: Card, tools: Sequence[Tool]) -> WorkerSession:
        registry = ToolRegistry([*default_registry(), *tools])
        config = SessionConfig(model=WORKER, cwd=workdir, spill_dir=tmp_path / "spill")
        deps = SessionDeps(store=store, client=client, registry=registry)
        handle = await start_session(
            system, config, deps, name=f"worker-{card.id}-{len(opened.sessions)}"
        )
        session_id = handle.id

        async def close(reason: str) -> None:
            opened.closed.append(session_id)
            await handle.close(reason, timeout=15.0)

        opened.sessions.append(session_id)
        return HandleWorker(session_id, handle, close, 60.0)

    async def start(**overrides: Any) -> tuple[ActorRef, KanbanClient, Opened]:
        settings = KanbanSettings(**{"auto_decompose": False, **overrides})

        async def locate(ctx: ActorContext) -> BoardDeps:
            return BoardDeps(
                store=store, open=open_worker, client=client, model=AUX, settings=settings
            )

        ref = await system.spawn(Board(locate), name="board")
        return ref, KanbanClient(ref), opened

    return start


async def until_status(board: KanbanClient, card_id: str, *statuses: str) -> dict[str, Any]:
    """The card once it is in one of ``statuses`` (bounded)."""
    with trio.fail_after(60):
        while True:
            card: dict[str, Any] = await board.call(GetCard(card_id))
            if card["status"] in statuses:
                return card
            await trio.sleep(0.02)


async def until(predicate: Callable[[], object]) -> None:
    """Return once ``predicate()`` is true (bounded)."""
    with trio.fail_after(60):
        while True:
            if predicate():
                return
            await trio.sleep(0.02)
