"""Shared fixtures: an actor system per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from actors import ActorSystem, open_system


@pytest.fixture
async def system() -> AsyncIterator[ActorSystem]:
    """A fresh actor system, shut down (gracefully) when the test ends."""
    async with open_system("test", kill_grace=1.0, call_timeout=5.0) as sys_:
        yield sys_
