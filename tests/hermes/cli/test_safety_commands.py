"""``hermes checkpoints`` and ``hermes approvals`` as processes, on real files and real git."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes.tools.checkpoint import ShadowRepo


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(
        '# mine\n[approvals]\nmode = "manual"  # ask me\n'
        'command_allowlist = ["recursive_delete", "git_clean"]\n'
    )
    return {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "HERMES_CONFIG": str(config),
        "HERMES_DATA_DIR": str(tmp_path / "data"),
        "HERMES_RUNTIME_DIR": str(tmp_path / "run"),
    }


def hermes(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_checkpoints_list_diff_and_restore(env: dict[str, str], tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    repo = ShadowRepo.for_dir(tmp_path / "data" / "checkpoints", work)
    repo.snapshot("before write_file a.txt")
    (work / "a.txt").write_text("two\n")
    (work / "new.txt").write_text("new\n")

    listed = hermes(env, "checkpoints", "list", "--dir", str(work))
    assert listed.returncode == 0, listed.stderr
    assert "  1  " in listed.stdout and "before write_file a.txt" in listed.stdout
    diff = hermes(env, "checkpoints", "diff", "--dir", str(work))
    assert "-one" in diff.stdout and "+two" in diff.stdout and "new.txt" in diff.stdout
    restored = hermes(env, "checkpoints", "restore", "1", "--dir", str(work))
    assert restored.returncode == 0, restored.stderr
    assert "the state before is checkpoint 1" in restored.stdout
    assert (work / "a.txt").read_text() == "one\n" and not (work / "new.txt").exists()
    undo = hermes(env, "checkpoints", "restore", "1", "--dir", str(work))
    assert undo.returncode == 0 and (work / "a.txt").read_text() == "two\n"
    missing = hermes(env, "checkpoints", "restore", "9", "--dir", str(work))
    assert missing.returncode == 1 and "there is no checkpoint 9" in missing.stderr
    empty = hermes(env, "checkpoints", "list", "--dir", str(tmp_path))
    assert "no checkpoints of" in empty.stdout


def test_approvals_list_and_revoke(env: dict[str, str]) -> None:
    listed = hermes(env, "approvals", "list")
    assert listed.returncode == 0, listed.stderr
    assert "recursive_delete         recursive delete (rm -r)" in listed.stdout
    assert "git_clean" in listed.stdout
    revoked = hermes(env, "approvals", "revoke", "git_clean")
    assert revoked.returncode == 0 and "revoked: git_clean" in revoked.stdout
    text = Path(env["HERMES_CONFIG"]).read_text()
    assert text.startswith('# mine\n[approvals]\nmode = "manual"  # ask me\n')
    assert '"recursive_delete"' in text and "git_clean" not in text
    unknown = hermes(env, "approvals", "revoke", "nope")
    assert unknown.returncode == 1 and "not in the allowlist: nope" in unknown.stderr
