"""Fixtures for the memory tests: a store in tmp_path, a snapshot of a directory's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.memory import MemoryStore


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memories"


@pytest.fixture
def store(memdir: Path) -> MemoryStore:
    return MemoryStore(memdir)


def disk(directory: Path) -> dict[str, bytes]:
    """Every file in ``directory`` with its bytes (empty when the directory is missing)."""
    if not directory.exists():
        return {}
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}
