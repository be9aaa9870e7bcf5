"""A job's pre-run script (seeds #10, #11, #120): where it may live, its environment, its
wake gate and its failures, run as real processes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from hermes.cron.script import (
    ScriptError,
    check_script_path,
    resolve_script,
    run_script,
    script_place,
)

BOUND = 20.0


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    return scripts


def write(folder: Path, name: str, text: str, *, executable: bool = False) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(0o755)
    return path


def test_a_job_names_a_script_inside_the_folder_by_a_relative_path(folder: Path) -> None:
    write(folder, "checks/disk.sh", "df -h\n")
    assert check_script_path("checks/disk.sh", folder) == "checks/disk.sh"
    with pytest.raises(ScriptError, match="must be a path relative to the scripts folder"):
        check_script_path(str(folder / "checks/disk.sh"), folder)
    with pytest.raises(ScriptError, match="must be a path relative"):
        check_script_path("~/disk.sh", folder)
    with pytest.raises(ScriptError, match="outside the scripts folder"):
        check_script_path("../escape.sh", folder)
    with pytest.raises(ScriptError, match="does not exist in the scripts folder"):
        check_script_path("missing.sh", folder)
    write(folder, "plain", "echo hi\n")
    with pytest.raises(ScriptError, match=r"is not executable and is neither \.py nor \.sh"):
        check_script_path("plain", folder)
    with pytest.raises(ScriptError, match="has no scripts folder"):
        check_script_path("checks/disk.sh", None)


def test_a_symlink_out_of_the_folder_is_refused(folder: Path, tmp_path: Path) -> None:
    outside = write(tmp_path, "outside.sh", "echo out\n")
    (folder / "link.sh").symlink_to(outside)
    with pytest.raises(ScriptError, match="outside the scripts folder"):
        check_script_path("link.sh", folder)


def test_at_fire_time_an_absolute_path_inside_the_folder_is_accepted(folder: Path) -> None:
    path = write(folder, "a.py", "print('x')\n")
    assert resolve_script(str(path), folder) == path.resolve()
    assert script_place("a.py", folder, None) == (path.resolve(), path.resolve().parent)
    assert script_place("a.py", folder, "/tmp")[1] == Path("/tmp")


async def test_the_script_gets_no_secrets_but_the_passthrough_ones(folder: Path) -> None:
    path = write(folder, "env.sh", 'echo "gh=$GITHUB_TOKEN other=$OTHER_SECRET path=$PLAIN"\n')
    environ = {**os.environ, "GITHUB_TOKEN": "ghp_x", "OTHER_SECRET": "s3", "PLAIN": "p"}
    with trio.fail_after(BOUND):
        scrubbed = await run_script(path, cwd=folder, environ=environ)
        kept = await run_script(path, cwd=folder, environ=environ, keep=("GITHUB_TOKEN",))
    assert scrubbed.output.strip() == "gh= other= path=p" and scrubbed.error is None
    assert kept.output.strip() == "gh=ghp_x other= path=p"


async def test_the_wake_gate(folder: Path) -> None:
    quiet = write(folder, "quiet.sh", "true\n")
    said_no = write(folder, "no.py", "print('checked')\nprint('{\"wakeAgent\": false}')\n")
    news = write(folder, "news.sh", "echo 3 new issues\n")
    with trio.fail_after(BOUND):
        runs = [await run_script(p, cwd=folder) for p in (quiet, said_no, news)]
    assert [run.wake for run in runs] == [False, False, True]
    assert runs[2].output == "3 new issues\n"


async def test_a_failing_or_slow_script_wakes_the_model_with_why(folder: Path) -> None:
    failing = write(folder, "fail.sh", "echo partial; exit 3\n")
    slow = write(folder, "slow.sh", "echo started; sleep 30\n")
    with trio.fail_after(BOUND):
        failed = await run_script(failing, cwd=folder)
        timed_out = await run_script(slow, cwd=folder, timeout=0.5)
    assert failed.error == "the script exited with status 3" and failed.wake
    assert failed.output == "partial\n"
    assert timed_out.error == "the script ran longer than 0.5s and was killed"
    assert timed_out.wake and "started" in timed_out.output
