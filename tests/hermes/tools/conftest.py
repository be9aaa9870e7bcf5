"""Fixtures for the tool layer: a context rooted in tmp_path and the built-in registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.tools import ToolContext, ToolRegistry, default_registry


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def ctx(workdir: Path, tmp_path: Path) -> ToolContext:
    return ToolContext.create(workdir, tmp_path / "spill")


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()
