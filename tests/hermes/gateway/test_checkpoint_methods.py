"""``checkpoint.*`` over a real daemon's WebSocket: list, diff, restore, and clear refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from hermes.gateway.client import GatewayError, connect
from hermes.tools.checkpoint import ShadowRepo
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon
from tests.hermes.gateway.test_gateway import new_session


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(
        tmp_path_factory.mktemp("checkpoints"), "[checkpoints]\nenabled = true\n"
    ) as d:
        yield d


async def test_list_diff_and_restore_over_the_websocket(daemon: Daemon, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    repo = ShadowRepo.for_dir(daemon.paths.data_dir / "checkpoints", work)
    await trio.to_thread.run_sync(repo.snapshot, "before write_file a.txt")
    (work / "a.txt").write_text("two\n")
    with trio.fail_after(CLI_BOUND):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            listed = await client.call("checkpoint.list", dir=str(work))
            assert [(c["number"], c["reason"]) for c in listed] == [(1, "before write_file a.txt")]
            diff = await client.call("checkpoint.diff", dir=str(work))
            assert "-one" in diff["diff"] and "+two" in diff["diff"] and not diff["truncated"]
            session = await new_session(client)
            done = await client.call("checkpoint.restore", dir=str(work), session=session)
            assert done["restored"]["reason"] == "before write_file a.txt"
            assert done["saved"]["reason"].startswith("before restoring")
            assert (work / "a.txt").read_text() == "one\n"
            for params, code in [
                ({"dir": "relative/dir"}, "invalid_params"),
                ({"dir": str(work / "missing")}, "invalid_params"),
                ({"dir": str(work), "number": 7}, "checkpoint_error"),
                ({"dir": str(work), "bogus": 1}, "invalid_params"),
            ]:
                with pytest.raises(GatewayError) as info:
                    await client.call("checkpoint.restore", **params)
                assert info.value.code == code, (params, info.value)
