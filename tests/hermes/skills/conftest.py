"""Skill fixtures: real skill folders written into temporary directories."""

from __future__ import annotations

from pathlib import Path

import pytest


def write_skill(
    root: Path,
    name: str,
    description: str = "Use it for tests",
    body: str = "Step one.\nStep two.",
    *,
    extra: str = "",
    files: dict[str, str] | None = None,
) -> Path:
    """A skill folder ``root/name`` with SKILL.md (and ``files``, relative paths)."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n", encoding="utf-8"
    )
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "skills"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository (a .git folder) with .hermes/skills."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".hermes" / "skills").mkdir(parents=True)
    (root / "src").mkdir()
    return root
