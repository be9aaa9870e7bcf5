"""``/checkpoints`` and ``/rollback`` in ``hermes chat`` against a real daemon.

The checkpoint is taken with the same shadow repository the daemon's tools write;
the chat reads the session's working directory from ``session.get`` and calls
``checkpoint.list`` and ``checkpoint.restore`` for it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from hermes.gateway.client import connect
from hermes.tools.checkpoint import ShadowRepo
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("chat-rollback")) as d:
        yield d


def chat(daemon: Daemon, session: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes", "chat", "--session", session],
        env=daemon.env,
        cwd=daemon.root,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=CLI_BOUND,
    )


def session_in(daemon: Daemon, work: Path) -> str:
    async def create() -> str:
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            created = await client.call("session.create", cwd=str(work))
            view = await client.call("session.get", session=created["id"])
            assert view["cwd"] == str(work)  # the view says where the session works
            return str(created["id"])

    return trio.run(create)


def test_checkpoints_lists_and_rollback_restores_the_sessions_directory(
    daemon: Daemon, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    repo = ShadowRepo.for_dir(daemon.paths.data_dir / "checkpoints", work)
    taken = repo.snapshot("before write_file a.txt")
    assert taken is not None
    (work / "a.txt").write_text("two\n")
    session = session_in(daemon, work)

    run = chat(daemon, session, "/checkpoints\n/rollback\n/checkpoints\n")
    assert run.returncode == 0, run.stderr
    assert (work / "a.txt").read_text() == "one\n"
    assert f"checkpoints of {work} (/rollback N restores one):" in run.stdout
    assert f"  1  {taken.commit[:10]}  " in run.stdout
    assert run.stdout.count("before write_file a.txt") >= 2  # listed before and after
    assert f"restored {work} to checkpoint 1 ({taken.commit[:10]}" in run.stderr
    assert "/rollback 1 undoes this" in run.stderr
    assert "  2  " in run.stdout  # the present was saved first: the old one is now 2

    undo = chat(daemon, session, "/rollback 1\n")
    assert undo.returncode == 0, undo.stderr
    assert (work / "a.txt").read_text() == "two\n"


def test_rollback_refuses_a_bad_number_and_a_directory_without_checkpoints(
    daemon: Daemon, tmp_path: Path
) -> None:
    work = tmp_path / "empty"
    work.mkdir()
    session = session_in(daemon, work)
    run = chat(daemon, session, "/checkpoints\n/rollback two\n/rollback 3\n")
    assert run.returncode == 0, run.stderr
    assert f"[no checkpoints of {work} yet]" in run.stderr
    assert "[usage: /rollback [N] (N = a number from /checkpoints; 1 = the latest)]" in run.stderr
    assert "checkpoint_error: " in run.stderr  # the daemon's answer, shown; the chat goes on
