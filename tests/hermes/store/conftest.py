"""Store fixtures: a real SQLite file under ``tmp_path``, owned by a real store actor."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest

from actors import ActorSystem
from hermes.store import StoreClient, spawn_store


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
async def store(system: ActorSystem, store_dir: Path) -> StoreClient:
    return await spawn_store(system, store_dir, register=None)


@pytest.fixture
def peek(store_dir: Path) -> Iterator[Callable[[], apsw.Connection]]:
    """Opens a second, ordinary connection to the file, to check what is really stored."""
    opened: list[apsw.Connection] = []

    def open_peek() -> apsw.Connection:
        conn = apsw.Connection(str(store_dir / "hermes.db"))
        opened.append(conn)
        return conn

    yield open_peek
    for conn in opened:
        conn.close()
