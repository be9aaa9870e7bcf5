"""The daemon is private (umask 0077); what its tools make for the user is not.

Files the agent writes in a project, and whatever its commands create, get the
umask the daemon was started with, as if the user had made them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.gateway.client import connect
from tests.hermes.gateway.fake_thread import ThreadedFake
from tests.hermes.gateway.test_gateway import new_session, until

from .daemon_proc import running_daemon

MAKE = "make the files"


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("user_mask", [0o022, 0o002])
def test_tools_create_with_the_users_umask_while_the_daemon_stays_private(
    tmp_path: Path, user_mask: int
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    fake = FakeProvider()
    fake.when(
        Reply.of(
            "Making them.",
            ToolUse("write_file", {"path": "new/deeper/notes.md", "content": "hi\n"}, id="t1"),
            ToolUse("terminal", {"command": "touch shell.txt && mkdir shelldir"}, id="t2"),
        ),
        last_user_text=MAKE,
    )
    with ThreadedFake(fake) as served, umask(user_mask):
        config = f'[model]\nbase_url = "{served.base_url}"\n[session]\ncwd = "{work}"\n'
        with running_daemon(tmp_path, config, ANTHROPIC_API_KEY="k", NO_PROXY="*") as daemon:

            async def turn() -> list[dict[str, object]]:
                with trio.fail_after(120):
                    async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
                        session = await new_session(client)
                        await client.call("events.subscribe", session=session)
                        await client.call("prompt.submit", session=session, text=MAKE)
                        return await until(client, "turn.completed", session)

            events = trio.run(turn)
            assert events[-1]["payload"] == {**events[-1]["payload"], "reason": "completed"}
            data_dir = daemon.paths.data_dir
    files, dirs = 0o666 & ~user_mask, 0o777 & ~user_mask
    assert mode(work / "new") == dirs and mode(work / "new" / "deeper") == dirs
    assert mode(work / "new" / "deeper" / "notes.md") == files
    assert mode(work / "shell.txt") == files and mode(work / "shelldir") == dirs
    assert mode(data_dir) == 0o700 and mode(data_dir / "hermes.db") == 0o600
