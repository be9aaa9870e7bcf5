"""The permanent allowlist in a real config file: comments kept, atomic, hand edits seen."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from hermes.daemon.allowlist import AllowlistError, AllowlistFile

CONFIG = """\
# my daemon
[session]
yolo = false   # never!

[approvals]
# keys I trust
command_allowlist = ["git_reset_hard"]

[model]
name = "claude-test"
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    path.chmod(0o640)
    return path


def test_always_keys_are_added_keeping_comments_order_and_mode(config: Path) -> None:
    allow = AllowlistFile(config)
    assert allow.current() == {"git_reset_hard"}
    assert allow.add({"recursive_delete"}) == {"recursive_delete"}
    assert allow.add({"recursive_delete"}) == set()  # once only
    text = config.read_text()
    assert text.startswith("# my daemon\n[session]\nyolo = false   # never!\n")
    assert "# keys I trust" in text and text.index("[approvals]") < text.index("[model]")
    assert '"git_reset_hard", "recursive_delete"' in text
    assert os.stat(config).st_mode & 0o777 == 0o640
    assert allow.current() == {"git_reset_hard", "recursive_delete"}
    assert not list(config.parent.glob(".config.toml.*"))  # no temporary left behind


def test_revoke_and_hand_edits_take_effect_at_once(config: Path) -> None:
    allow = AllowlistFile(config)
    assert allow.revoke({"git_reset_hard", "never_there"}) == {"git_reset_hard"}
    assert allow.current() == set()
    config.write_text(config.read_text().replace("[]", '["git_clean", "kill_all"]'))
    assert allow.current() == {"git_clean", "kill_all"}


def test_a_new_file_gets_the_section_and_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "hermes" / "config.toml"
    AllowlistFile(path).add({"git_clean"})
    assert path.read_text() == '[approvals]\ncommand_allowlist = ["git_clean"]\n'
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_a_broken_file_is_not_overwritten(config: Path) -> None:
    allow = AllowlistFile(config)
    assert allow.current() == {"git_reset_hard"}
    config.write_text("[approvals\nbroken")
    with pytest.raises(AllowlistError, match="not valid TOML"):
        allow.add({"git_clean"})
    assert config.read_text() == "[approvals\nbroken"
    assert allow.current() == {"git_reset_hard"}  # what was read before


def test_concurrent_writers_lose_no_key(config: Path) -> None:
    keys = [f"key_{i}" for i in range(16)]
    threads = [threading.Thread(target=AllowlistFile(config).add, args=({k},)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert AllowlistFile(config).current() == {"git_reset_hard", *keys}
