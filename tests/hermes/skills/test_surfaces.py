"""``skills.*`` over a real daemon's WebSocket and HTTP: list, show, install (with the
install policy), remove (with a lock) and trust, with clear refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import trio

from hermes.gateway.client import GatewayError, connect
from hermes.skills.trust import trusted_projects
from hermes.skills.usage import set_locked
from tests.hermes.daemon.daemon_proc import CLI_BOUND, Daemon, running_daemon
from tests.hermes.gateway.test_gateway import ahttp

from .conftest import write_skill
from .test_install import CAUTION, HOSTILE


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("skills"), "[review]\nenabled = false\n") as d:
        yield d


async def test_install_list_show_remove_and_trust_over_the_websocket(
    daemon: Daemon, tmp_path: Path
) -> None:
    user_dir = daemon.paths.data_dir / "skills"
    good = write_skill(tmp_path / "dl", "ws-deploy", "Deploy over ws", "Run make deploy.")
    caution = write_skill(tmp_path / "dl", "ws-pirate", "Pirate talk", CAUTION)
    hostile = write_skill(tmp_path / "dl", "ws-hostile", "Helps", HOSTILE)
    with trio.fail_after(CLI_BOUND):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            done = await client.call("skills.install", path=str(good))
            assert (done["name"], done["trust"], done["verdict"]) == (
                "ws-deploy",
                "community",
                "safe",
            )
            assert (user_dir / "ws-deploy" / "SKILL.md").is_file()
            listed = await client.call("skills.list")
            row = next(s for s in listed["skills"] if s["name"] == "ws-deploy")
            assert row["source"] == "user" and row["locked"] is False
            shown = await client.call("skills.show", name="ws-deploy")
            assert "Run make deploy." in shown["text"] and shown["source"] == "user"

            for params, code in [
                ({"path": str(caution)}, "needs_force"),
                ({"path": str(hostile), "force": True}, "unsafe_skill"),
                ({"path": str(good)}, "skill_exists"),
                ({"path": "relative/dir"}, "invalid_params"),
                ({"path": str(tmp_path / "missing")}, "invalid_params"),
                ({"path": str(tmp_path / "dl")}, "invalid_skill"),
            ]:
                with pytest.raises(GatewayError) as info:
                    await client.call("skills.install", **params)
                assert info.value.code == code, (params, info.value)
            assert (await client.call("skills.install", path=str(caution), force=True))["forced"]
            assert not (user_dir / "ws-hostile").exists()

            set_locked(user_dir, "ws-deploy", True)
            with pytest.raises(GatewayError) as info:
                await client.call("skills.remove", name="ws-deploy")
            assert info.value.code == "skill_locked" and "unlock it first" in info.value.message
            set_locked(user_dir, "ws-deploy", False)
            gone = await client.call("skills.remove", name="ws-deploy")
            assert Path(gone["archived_to"]).parent == user_dir / ".archive"
            with pytest.raises(GatewayError) as info:
                await client.call("skills.show", name="ws-deploy")
            assert info.value.code == "unknown_skill"

            project = tmp_path / "proj"
            (project / ".git").mkdir(parents=True)
            trusted = await client.call("skills.trust", project=str(project))
            assert trusted["changed"] and trusted["project"] == str(project.resolve())
            assert str(project.resolve()) in trusted_projects(daemon.paths.config_file)
            await client.call("skills.trust", project=str(project), trusted=False)
            assert trusted_projects(daemon.paths.config_file) == []


async def test_the_http_routes(daemon: Daemon, tmp_path: Path) -> None:
    source = write_skill(tmp_path / "dl", "web-skill", "From the web", "Do the web thing.")
    caution = write_skill(tmp_path / "dl", "web-pirate", "Pirate talk", CAUTION)
    with trio.fail_after(CLI_BOUND):
        status, done = await ahttp(daemon, "POST", "/skills/install", {"path": str(source)})
        assert status == 200 and done["result"]["name"] == "web-skill"
        status, listed = await ahttp(daemon, "GET", f"/skills?cwd={quote(str(tmp_path))}")
        assert status == 200 and "web-skill" in {s["name"] for s in listed["result"]["skills"]}
        status, shown = await ahttp(daemon, "GET", "/skills/web-skill")
        assert status == 200 and "Do the web thing." in shown["result"]["text"]
        status, error = await ahttp(daemon, "POST", "/skills/install", {"path": str(caution)})
        assert status == 409 and error["error"]["code"] == "needs_force"
        status, error = await ahttp(daemon, "GET", "/skills/no-such-skill")
        assert status == 404 and error["error"]["code"] == "unknown_skill"
        status, gone = await ahttp(daemon, "POST", "/skills/web-skill/remove")
        assert status == 200 and "archived_to" in gone["result"]
        status, error = await ahttp(daemon, "POST", "/skills/web-skill/remove")
        assert status == 404 and error["error"]["code"] == "unknown_skill"
