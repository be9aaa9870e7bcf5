"""Process registry fixtures: a notice collector, a registry factory (the store is shared)."""

from __future__ import annotations

import pytest

from actors import ActorSystem
from hermes.processes import ProcessConfig, ProcessService, spawn_process_registry
from hermes.procgroup import enable_subreaper
from hermes.store import StoreClient

from .helpers import FAST, Notices, StartRegistry


@pytest.fixture(autouse=True)
def subreaper() -> None:
    """Orphaned grandchildren come back to this process, so tests can see them reaped."""
    assert enable_subreaper()


@pytest.fixture
def notices() -> Notices:
    return Notices()


@pytest.fixture
def start_registry(system: ActorSystem, notices: Notices) -> StartRegistry:
    """``await start_registry(store=None, config=FAST, session_id="s-1", name=...)``."""
    count = 0

    async def start(
        *,
        store: StoreClient | None = None,
        config: ProcessConfig = FAST,
        session_id: str = "s-1",
        name: str | None = None,
    ) -> ProcessService:
        nonlocal count
        count += 1
        return await spawn_process_registry(
            system,
            session_id,
            notices,
            store=store,
            config=config,
            name=name or f"processes-{count}",
        )

    return start
