"""Session fixtures: the fake provider over real HTTP, a real SQLite store, real tools."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from actors import ActorSystem
from hermes.fake import FakeProvider, open_fake_provider
from hermes.model import ModelClient, RetryPolicy
from hermes.session import SessionConfig, SessionDeps, SessionHandle, start_session
from hermes.store import StoreClient, spawn_store
from hermes.tools import ToolRegistry, default_registry

KEY = "test-key"
MODEL = "claude-test"


@pytest.fixture
async def fake() -> AsyncIterator[FakeProvider]:
    async with open_fake_provider(api_key=KEY) as provider:
        yield provider


@pytest.fixture
async def client(fake: FakeProvider) -> AsyncIterator[ModelClient]:
    retry = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01, deadline=30)
    async with ModelClient(api_key=KEY, base_url=fake.base_url, retry=retry, trust_env=False) as c:
        yield c


@pytest.fixture
async def store(system: ActorSystem, tmp_path: Path) -> StoreClient:
    return await spawn_store(system, tmp_path / "data", register=None)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()


@pytest.fixture
def config(workdir: Path, tmp_path: Path) -> SessionConfig:
    return SessionConfig(model=MODEL, cwd=workdir, spill_dir=tmp_path / "spill")


@pytest.fixture
def deps(store: StoreClient, client: ModelClient, registry: ToolRegistry) -> SessionDeps:
    return SessionDeps(store=store, client=client, registry=registry)


SessionFactory = Callable[..., Awaitable[SessionHandle]]


@pytest.fixture
def open_session(system: ActorSystem, config: SessionConfig, deps: SessionDeps) -> SessionFactory:
    """Start a session; keyword arguments override ``SessionConfig`` fields."""
    import attrs

    async def start(session_id: str | None = None, **overrides: Any) -> SessionHandle:
        return await start_session(
            system, attrs.evolve(config, **overrides), deps, session_id=session_id
        )

    return start


@pytest.fixture
async def session(open_session: SessionFactory) -> SessionHandle:
    return await open_session()
