"""``kill -9`` of the daemon while a foreground ``terminal`` command runs, then a restart.

The command's process group outlives the daemon (nothing else kills it). The
restarted daemon must find it (it was recorded before the command ran), kill it
(or, configured so, leave it running and list it under ``hermes orphans``), and
the tool call's result in the transcript must say what happened, before the
command's side effect (``touch MARKER``) can complete.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import trio

from actors import open_system
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.gateway.client import connect
from hermes.model import ToolResultBlock
from hermes.processes.procfs import Fingerprint, Liveness
from hermes.procgroup import live_members
from hermes.store import spawn_store
from tests.hermes.gateway.fake_thread import ThreadedFake

from .daemon_proc import Daemon, daemon_env, write_config

RUN = "run the slow command"
CALL = "toolu_leftover_1"


def _provider(command: str) -> FakeProvider:
    fake = FakeProvider()
    fake.when(
        Reply.of("Running it.", ToolUse("terminal", {"command": command}, id=CALL)),
        last_user_text=RUN,
    )
    return fake


def _group_of(command: str) -> int | None:
    """The pid of the ``bash -c COMMAND`` process (from ``/proc``): the group's leader."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with suppress(OSError), open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")[:-1]
                if (
                    len(argv) == 3
                    and argv[0].endswith(b"bash")
                    and argv[1:]
                    == [
                        b"-c",
                        command.encode(),
                    ]
                ):
                    return int(entry)
    return None


async def _run_command(daemon: Daemon, started: Path) -> str:
    """A session whose turn is running the command (its first line has run)."""
    assert daemon.endpoint is not None
    with trio.fail_after(120):
        async with connect(daemon.endpoint) as client:
            session: str = (await client.call("session.create"))["id"]
            accepted = await client.call("prompt.submit", session=session, text=RUN)
            assert accepted["how"] == "started"
            while not await trio.Path(started).exists():  # noqa: ASYNC110 - a file, no event
                await trio.sleep(0.02)
    return session


async def _resume(daemon: Daemon, session: str) -> None:
    assert daemon.endpoint is not None
    with trio.fail_after(120):
        async with connect(daemon.endpoint) as client:
            await client.call("session.resume", session=session)


async def _tool_result(data_dir: Path, session: str) -> ToolResultBlock:
    async with open_system("read") as system:
        store = await spawn_store(system, data_dir, register=None)
        transcript = await store.load(session)
    for message in transcript.messages:
        for block in message.content:
            if isinstance(block, ToolResultBlock) and block.tool_use_id == CALL:
                return block
    raise AssertionError(f"no result for {CALL} in {transcript.messages}")


AfterRestart = Callable[[Daemon, int, str], str]
"""Checks on the restarted daemon (its group's pid, the session); returns the call's result."""


def _crash_and_restart(tmp_path: Path, extra_config: str, after_restart: AfterRestart) -> str:
    """Start, run the command, ``kill -9`` the daemon, restart; the call's result text."""
    work = tmp_path / "work"
    work.mkdir()
    started, marker = work / "STARTED", work / "MARKER"
    command = f"touch {started}; sleep 600; touch {marker}"
    pgid: int | None = None
    with ThreadedFake(_provider(command)) as fake:
        write_config(
            tmp_path,
            f'[model]\nbase_url = "{fake.base_url}"\n'
            f'[session]\ncwd = "{work}"\nyolo = true\n{extra_config}',
        )
        env = daemon_env(tmp_path, ANTHROPIC_API_KEY="test-key", NO_PROXY="*")
        first = Daemon(tmp_path, env)
        first.start()
        try:
            session = trio.run(_run_command, first, started)
            pgid = _group_of(command)
            assert pgid is not None, "the command's bash was not found in /proc"
            assert first.proc is not None
            os.kill(first.proc.pid, signal.SIGKILL)  # the daemon alone, not the command's group
            first.proc.wait()
            fingerprint = Fingerprint.of(pgid)
            assert fingerprint is not None and fingerprint.check() is Liveness.ALIVE
            second = Daemon(tmp_path, env)
            second.start()
            try:
                text = after_restart(second, pgid, session)
            finally:
                second.kill()
            assert f"process group {pgid})" in text
            assert "the daemon stopped while this command ran" in text
        finally:
            first.kill()
            if pgid is not None and live_members(pgid):
                os.killpg(pgid, signal.SIGKILL)
    assert not marker.exists()
    return text


def test_a_restart_kills_the_group_a_killed_daemon_left_and_the_result_says_so(
    tmp_path: Path,
) -> None:
    def after_restart(daemon: Daemon, pgid: int, session: str) -> str:
        assert not live_members(pgid)  # killed while the daemon started, before it served
        trio.run(_resume, daemon, session)  # the session's history repair runs
        daemon.kill()
        result = trio.run(_tool_result, daemon.paths.data_dir, session)
        assert result.is_error
        return str(result.content)

    text = _crash_and_restart(tmp_path, "", after_restart)
    assert "was still running after the restart and was killed" in text


def test_configured_to_list_a_restart_leaves_the_group_listed_and_the_result_says_so(
    tmp_path: Path,
) -> None:
    listed_as: list[str] = []

    def after_restart(daemon: Daemon, pgid: int, session: str) -> str:
        assert live_members(pgid)  # left running, as configured
        listed = daemon.cli("orphans", "--json")
        assert listed.returncode == 0, listed.stderr
        (row,) = [r for r in json.loads(listed.stdout) if r["pid"] == pgid]
        assert row["liveness"] == "alive" and row["id"].startswith("fg_")
        listed_as.append(row["id"])
        trio.run(_resume, daemon, session)  # the repair: it is still running
        killed = daemon.cli("orphans", "--kill", "--process", row["id"], "--json")
        assert killed.returncode == 0, killed.stderr
        assert [r["action"] for r in json.loads(killed.stdout)] == ["killed"]
        assert not live_members(pgid)
        daemon.kill()
        return str(trio.run(_tool_result, daemon.paths.data_dir, session).content)

    text = _crash_and_restart(tmp_path, '[processes]\nleftover_commands = "list"\n', after_restart)
    assert "still running" in text
    assert f"`hermes orphans --kill --process {listed_as[0]}` stops it" in text
