"""``skills.*`` over a real daemon's WebSocket and HTTP: list, show, install (with the
install policy), remove (with a lock) and trust, with clear refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import trio

from hermes.gateway.client import GatewayError, connect
from hermes.skills.pending import SkillChange, stage
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


def staged(user_dir: Path, name: str, body: str, origin: str = "skill_manage", **files: str) -> str:
    """Stage the creation of skill ``name`` as ``skill_manage`` would; its id."""
    content = f"---\nname: {name}\ndescription: Staged {name}\n---\n{body}\n"
    paths = {f"references/{k}.md": v for k, v in files.items()}
    return stage(user_dir, SkillChange(name=name, new=True, content=content, files=paths), origin)


async def test_pending_changes_over_the_websocket(daemon: Daemon) -> None:
    """``skills.pending|approve|reject`` do what ``hermes skills pending|approve|reject`` do,
    on the changes ``[skills] write_approval`` staged in the daemon's skills folder."""
    user_dir = daemon.paths.data_dir / "skills"
    user_dir.mkdir(parents=True, exist_ok=True)
    made = staged(user_dir, "ws-staged", "Run it.", notes="More.")
    dropped = staged(user_dir, "ws-dropped", "No.", "review of session s-1")
    clash = staged(user_dir, "ws-staged", "Again.")
    with trio.fail_after(CLI_BOUND):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            listed = await client.call("skills.pending")
            rows = {c["id"]: c for c in listed["changes"]}
            assert {made, dropped, clash} <= set(rows)
            assert rows[made]["what"] == "create ws-staged (+ references/notes.md)"
            assert rows[made]["files"] == {"references/notes.md": "More."}
            assert rows[dropped]["origin"] == "review of session s-1"
            assert "Run it." in rows[made]["content"]

            done = await client.call("skills.approve", change=made)
            assert done == {"id": made, "approved": True, "done": rows[made]["what"]}
            assert "Run it." in (user_dir / "ws-staged" / "SKILL.md").read_text()
            assert (user_dir / "ws-staged" / "references" / "notes.md").read_text() == "More."
            with pytest.raises(GatewayError) as info:  # created meanwhile: refused, kept
                await client.call("skills.approve", change=clash)
            assert info.value.code == "skill_exists", info.value
            assert clash in {c["id"] for c in (await client.call("skills.pending"))["changes"]}
            rejected = await client.call("skills.reject", change=dropped)
            assert rejected["approved"] is False and rejected["done"] == "create ws-dropped"
            assert not (user_dir / "ws-dropped").exists()
            with pytest.raises(GatewayError) as info:
                await client.call("skills.reject", change=dropped)
            assert info.value.code == "unknown_change" and clash in info.value.message
            with pytest.raises(GatewayError) as info:
                await client.call("skills.approve", change="../../etc")
            assert info.value.code == "unknown_change"
            with pytest.raises(GatewayError) as info:
                await client.call("skills.approve")
            assert info.value.code == "invalid_params" and "change" in info.value.message
            await client.call("skills.reject", change=clash)
            assert not {made, dropped, clash} & {
                c["id"] for c in (await client.call("skills.pending"))["changes"]
            }


async def test_pending_changes_over_http(daemon: Daemon) -> None:
    user_dir = daemon.paths.data_dir / "skills"
    user_dir.mkdir(parents=True, exist_ok=True)
    keep = staged(user_dir, "web-staged", "Web.")
    drop = staged(user_dir, "web-dropped", "No.")
    with trio.fail_after(CLI_BOUND):
        status, listed = await ahttp(daemon, "GET", "/skills/.pending")
        assert status == 200 and {keep, drop} <= {c["id"] for c in listed["result"]["changes"]}
        status, done = await ahttp(daemon, "POST", f"/skills/.pending/{keep}/approve")
        assert status == 200 and done["result"]["done"] == "create web-staged"
        assert (user_dir / "web-staged" / "SKILL.md").is_file()
        status, done = await ahttp(daemon, "POST", f"/skills/.pending/{drop}/reject")
        assert status == 200 and done["result"]["approved"] is False
        assert not (user_dir / "web-dropped").exists()
        status, error = await ahttp(daemon, "POST", f"/skills/.pending/{drop}/approve")
        assert status == 404 and error["error"]["code"] == "unknown_change"
        status, error = await ahttp(daemon, "POST", "/skills/.pending/x/merge")
        assert status == 404, error
