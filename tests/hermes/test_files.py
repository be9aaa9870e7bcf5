"""``hermes.files.replace_file``: atomic, durable, private by default."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hermes.files import replace_file


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_private_and_holds_the_text(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    replace_file(path, "héllo\n")
    assert path.read_bytes() == "héllo\n".encode()
    assert mode_of(path) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.toml"]  # no temporary left


def test_a_replaced_file_keeps_its_mode_unless_told(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("old")
    os.chmod(path, 0o640)
    replace_file(path, b"new")
    assert path.read_text() == "new" and mode_of(path) == 0o640
    replace_file(path, "newer", mode=0o600)
    assert path.read_text() == "newer" and mode_of(path) == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("kept")
    with pytest.raises(TypeError):
        replace_file(path, object())  # type: ignore[arg-type]
    assert path.read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]
