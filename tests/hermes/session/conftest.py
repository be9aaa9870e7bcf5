"""Session fixtures over the shared fake, client (three attempts), store, workdir and tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from actors import ActorSystem
from hermes.model import ModelClient
from hermes.session import SessionConfig, SessionDeps, SessionHandle, start_session
from hermes.store import StoreClient
from hermes.tools import ToolRegistry

MODEL = "claude-test"


@pytest.fixture
def config(workdir: Path, tmp_path: Path) -> SessionConfig:
    return SessionConfig(model=MODEL, cwd=workdir, spill_dir=tmp_path / "spill")


@pytest.fixture
def deps(store: StoreClient, client: ModelClient, registry: ToolRegistry) -> SessionDeps:
    return SessionDeps(store=store, client=client, registry=registry)


SessionFactory = Callable[..., Awaitable[SessionHandle]]


@pytest.fixture
def open_session(system: ActorSystem, config: SessionConfig, deps: SessionDeps) -> SessionFactory:
    """Start a session; keyword arguments override ``SessionConfig`` fields, ``with_deps``
    replaces the collaborators."""
    import attrs

    async def start(
        session_id: str | None = None, with_deps: SessionDeps | None = None, **overrides: Any
    ) -> SessionHandle:
        return await start_session(
            system, attrs.evolve(config, **overrides), with_deps or deps, session_id=session_id
        )

    return start


@pytest.fixture
async def session(open_session: SessionFactory) -> SessionHandle:
    return await open_session()
