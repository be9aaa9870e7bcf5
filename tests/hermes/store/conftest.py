"""Store fixtures: a second connection to the shared ``store`` fixture's SQLite file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest


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
