"""Shared fixtures: an actor system per test; the cyclic collector's finds."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from actors import ActorSystem, open_system


@pytest.fixture
async def system() -> AsyncIterator[ActorSystem]:
    """A fresh actor system, shut down (gracefully) when the test ends."""
    async with open_system("test", kill_grace=1.0, call_timeout=5.0) as sys_:
        yield sys_


@pytest.fixture
def saved_garbage() -> Iterator[list[Any]]:
    """``gc.garbage`` of collections made during the test, with automatic GC off."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
