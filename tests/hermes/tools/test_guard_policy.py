"""The path policy on its own, and a property: nothing under a protected root is ever written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.tools import ToolCall, default_registry
from hermes.tools.guard import Action, PathPolicy

from .guarded import Place, guarded_ctx, make_place


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    return make_place(tmp_path, monkeypatch)


def test_the_policy_finds_the_daemon_places_from_the_environment(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "h"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "HERMES_DATA_DIR": str(tmp_path / "data"),
        "XDG_RUNTIME_DIR": str(tmp_path / "xdg"),
    }
    policy = PathPolicy.from_environment(env)
    for path, key in [
        (tmp_path / "cfg" / "hermes" / "config.toml", "agent_state"),
        (tmp_path / "data" / "hermes.db-wal", "agent_state"),
        (tmp_path / "xdg" / "hermes" / "token", "agent_state"),
        (tmp_path / "xdg" / "docker.sock", "docker_socket"),
        (tmp_path / "h" / ".kube" / "config", "credential"),
    ]:
        ruling = policy.check_write(path)
        assert (ruling.action, ruling.key) == (Action.REFUSE, key), path
    assert policy.check_read(tmp_path / "xdg" / "hermes" / "token").key == "agent_secret"
    assert policy.check_read(tmp_path / "data" / "spill" / "c1-terminal.txt").allowed
    token = policy.check_read(tmp_path / "data" / "mcp" / "oauth" / "github.json")  # seed #108
    assert token.key == "agent_secret" and "OAuth tokens" in token.reason
    signing = policy.check_read(tmp_path / "data" / "cron" / "webhook.key")
    assert signing.key == "agent_secret" and "webhook deliveries" in signing.reason
    config = tmp_path / "cfg" / "hermes" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'# where the store lives\ndata_dir = "{tmp_path / "elsewhere"}"\n')
    moved = PathPolicy.from_environment(env).check_write(tmp_path / "elsewhere" / "hermes.db")
    assert moved.key == "agent_state"


@pytest.mark.parametrize(
    ("name", "refused"),
    [
        (".env", True),
        (".ENV.local", True),
        ("prod.env", True),
        (".env.example", False),
        (".env.sample", False),
        ("environment.py", False),
        ("env", False),
    ],
)
def test_which_names_are_env_files(place: Place, name: str, refused: bool) -> None:
    ruling = place.policy.check_read(place.work / name)
    assert (ruling.key == "env_file") is refused


def test_deleting_a_directory_that_holds_a_protected_root_is_refused(place: Place) -> None:
    assert place.policy.check_delete(place.home).action is Action.REFUSE
    assert place.policy.check_delete(place.home / ".aws").key == "credential"
    assert place.policy.check_delete(place.venv.parent).key == "runtime"
    assert place.policy.check_delete(place.work / "build").allowed


# -- the property ----------------------------------------------------------------------------

_SEGMENTS = st.sampled_from(
    [
        "..",
        ".",
        "a",
        "keys",
        "cloud",
        "up",
        "run",
        ".ssh",
        ".aws",
        "id_ed25519",
        "credentials",
        "token",
        "home",
        "venv",
        "lib",
        "site.py",
        "config",
        "x.txt",
    ]
)


def _snapshot(roots: list[Path]) -> dict[str, bytes]:
    seen: dict[str, bytes] = {}
    for root in roots:
        for current, _, files in os.walk(root):
            for name in files:
                path = os.path.join(current, name)
                seen[path] = Path(path).read_bytes()
    return seen


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(parts=st.lists(_SEGMENTS, min_size=1, max_size=7))
def test_no_generated_path_under_a_protected_root_is_ever_written(
    place: Place, tmp_path: Path, parts: list[str]
) -> None:
    for link, target in (
        ("keys", place.home / ".ssh"),
        ("cloud", place.home / ".aws"),
        ("up", tmp_path),
        ("run", place.runtime),
    ):
        if not (place.work / link).is_symlink():
            (place.work / link).symlink_to(target)
    protected = [place.home / ".ssh", place.home / ".aws", place.runtime, place.venv]
    before = _snapshot(protected)
    relative = "/".join(parts)
    real = os.path.realpath(place.work / relative)
    under = any(real == str(r) or real.startswith(f"{r}/") for r in protected)
    ruling = place.policy.check_write(place.work / relative)
    if under and real != str(place.home / ".ssh" / "config"):
        assert ruling.action is Action.REFUSE, (relative, real)

    async def write() -> None:
        ctx = guarded_ctx(place, tmp_path)
        with trio.fail_after(20):
            await default_registry().call(
                ToolCall("p", "write_file", {"path": relative, "content": "overwritten"}), ctx
            )

    trio.run(write)
    assert _snapshot(protected) == before, relative
