"""Fixtures of the agent's tests: the fake provider over real HTTP, a real
``ModelClient`` on it, a real SQLite store, a memory store, a work directory and
the built-in tools.

What differs between directories is a fixture of its own that a conftest (or a
test module) overrides: ``fake_setup`` (demo model, key, checks on exit),
``retry_attempts`` or the whole ``retry`` policy, ``client_type`` (a
``ModelClient`` subclass), ``store_dir``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from actors import ActorSystem
from hermes.fake import FakeProvider
from hermes.memory import MemoryStore
from hermes.model import ModelClient, RetryPolicy
from hermes.store import StoreClient, spawn_store
from hermes.tools import ToolRegistry, default_registry

from .fake_model import FakeSetup, fast_retry, open_fake


@pytest.fixture
def fake_setup() -> FakeSetup:
    """The demo model answers what nothing scripted; no checks on exit."""
    return FakeSetup()


@pytest.fixture
async def fake(fake_setup: FakeSetup) -> AsyncIterator[FakeProvider]:
    async with open_fake(fake_setup) as provider:
        yield provider


@pytest.fixture
def retry_attempts() -> int:
    return 3


@pytest.fixture
def retry(retry_attempts: int) -> RetryPolicy:
    return fast_retry(retry_attempts)


@pytest.fixture
def client_type() -> type[ModelClient]:
    return ModelClient


@pytest.fixture
async def client(
    fake: FakeProvider, fake_setup: FakeSetup, retry: RetryPolicy, client_type: type[ModelClient]
) -> AsyncIterator[ModelClient]:
    """A ``client_type`` on ``fake`` with the ``retry`` policy (no proxies)."""
    async with client_type(
        api_key=fake_setup.api_key, base_url=fake.base_url, retry=retry, trust_env=False
    ) as c:
        yield c


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
async def store(system: ActorSystem, store_dir: Path) -> StoreClient:
    return await spawn_store(system, store_dir, register=None)


@pytest.fixture
def memory(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memories")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()
