"""Fixtures for the tool layer: a context in the shared ``workdir`` (its spill under tmp_path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.tools import ToolContext


@pytest.fixture
def ctx(workdir: Path, tmp_path: Path) -> ToolContext:
    return ToolContext.create(workdir, tmp_path / "spill")
