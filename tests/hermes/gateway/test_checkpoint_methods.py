"""``checkpoint.*`` over a real daemon's WebSocket: list, diff, restore, and clear refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import trio

from hermes.gateway.client import GatewayError, connect
from hermes.tools.checkpoint import ShadowRepo
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon
from tests.hermes.gateway.test_gateway import ahttp, new_session


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


async def test_the_http_routes(daemon: Daemon, tmp_path: Path) -> None:
    work = tmp_path / "web work"
    work.mkdir()
    (work / "b.txt").write_text("old\n")
    repo = ShadowRepo.for_dir(daemon.paths.data_dir / "checkpoints", work)
    await trio.to_thread.run_sync(repo.snapshot, "before patch b.txt")
    (work / "b.txt").write_text("new\n")
    where = quote(str(work))
    with trio.fail_after(CLI_BOUND):
        status, listed = await ahttp(daemon, "GET", f"/checkpoints?dir={where}")
        assert status == 200 and listed["result"][0]["reason"] == "before patch b.txt"
        status, diff = await ahttp(daemon, "GET", f"/checkpoints/diff?dir={where}&number=1")
        assert status == 200 and "+new" in diff["result"]["diff"]
        status, done = await ahttp(daemon, "POST", "/checkpoints/restore", {"dir": str(work)})
        assert status == 200 and done["result"]["restored"]["number"] == 1
        assert (work / "b.txt").read_text() == "old\n"
        status, error = await ahttp(
            daemon, "POST", "/checkpoints/restore", {"dir": str(work), "number": 5}
        )
        assert status == 409 and error["error"]["code"] == "checkpoint_error"
