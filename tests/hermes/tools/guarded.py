"""A home, a daemon and a project in tmp_path, with the path guard pointed at them."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from hermes.tools import ApprovalChoice, ApprovalRequest, ToolContext
from hermes.tools.guard import PathPolicy


@attrs.define
class Place:
    """The temporary world of one test."""

    home: Path
    work: Path
    runtime: Path
    config: Path
    data: Path
    venv: Path
    policy: PathPolicy


def make_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    home = tmp_path / "home"
    work = tmp_path / "work"
    runtime = tmp_path / "run" / "hermes"
    venv = tmp_path / "venv"
    for d in (home / ".ssh", home / ".aws", work, runtime, venv / "lib"):
        d.mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (home / ".ssh" / "id_ed25519.pub").write_text("ssh-ed25519 AAAA public\n")
    (home / ".aws" / "credentials").write_text("[default]\naws_secret_access_key = s3cr3t\n")
    (runtime / "token").write_text("daemon-token\n")
    (venv / "lib" / "site.py").write_text("# the daemon's own code\n")
    monkeypatch.setenv("HOME", str(home))  # ``~`` in the tools' arguments
    env = {"HOME": str(home), "HERMES_RUNTIME_DIR": str(runtime)}
    policy = PathPolicy.from_environment(env)
    policy = attrs.evolve(policy, runtime=(*policy.runtime, str(venv)))
    return Place(
        home=home,
        work=work,
        runtime=runtime,
        config=home / ".config" / "hermes" / "config.toml",
        data=home / ".local" / "share" / "hermes",
        venv=venv,
        policy=policy,
    )


class Person:
    """An approval surface that answers with ``choice`` and records what it was asked."""

    def __init__(self, choice: ApprovalChoice) -> None:
        self.choice = choice
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalChoice:
        self.asked.append(request)
        return self.choice


def guarded_ctx(place: Place, tmp_path: Path) -> ToolContext:
    return ToolContext.create(place.work, tmp_path / "spill", guard=place.policy)
