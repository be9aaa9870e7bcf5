"""The path guard on the terminal: what a command line writes, deletes or kills (real bash)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import attrs
import pytest
import trio

from hermes.tools import ApprovalChoice, ToolCall, ToolContext, ToolOutcome, ToolRegistry
from hermes.tools.guard.commands import Daemon, command_hits

from .guarded import Person, Place, guarded_ctx, make_place


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    return make_place(tmp_path, monkeypatch)


@pytest.fixture
def gctx(place: Place, tmp_path: Path) -> ToolContext:
    return guarded_ctx(place, tmp_path)


async def terminal(registry: ToolRegistry, ctx: ToolContext, command: str) -> ToolOutcome:
    with trio.fail_after(30):
        return await registry.call(ToolCall("t1", "terminal", {"command": command}), ctx)


def guarded(outcome: ToolOutcome, key: str) -> str:
    assert outcome.is_error, outcome.content
    assert outcome.details == {"ran": False, "verdict": "guarded", "guard": key}
    assert outcome.content.startswith("Command NOT run: ")
    assert "whatever the approval settings" in outcome.content
    return outcome.content


async def test_a_redirect_into_ssh_is_refused_even_in_yolo(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    gctx.approvals.yolo = True
    outcome = await terminal(
        registry, gctx, "touch ran.txt && echo 'ssh-rsa AAAA evil' >> ~/.ssh/authorized_keys"
    )
    text = guarded(outcome, "credential")
    assert f"it writes {place.home}/.ssh/authorized_keys" in text
    assert not (place.home / ".ssh" / "authorized_keys").exists()
    assert not (place.work / "ran.txt").exists()  # nothing of the line ran


async def test_a_symlinked_directory_and_nested_bash_c_are_followed(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    (place.work / "cloud").symlink_to(place.home / ".aws")
    outcome = await terminal(registry, gctx, "bash -c 'printf x | tee cloud/credentials'")
    text = guarded(outcome, "credential")
    assert "resolves" not in text  # the clause names the path as the command spells it
    assert "s3cr3t" in (place.home / ".aws" / "credentials").read_text()
    moved = await terminal(registry, gctx, "mv ~/.ssh/id_ed25519 stolen")
    assert "deletes or moves" in guarded(moved, "credential")
    assert (place.home / ".ssh" / "id_ed25519").exists()


async def test_deleting_the_interpreters_venv_is_refused(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    (place.work / "env").symlink_to(place.venv)
    gctx.approvals.yolo = True
    outcome = await terminal(registry, gctx, "rm -rf env/")
    assert "separate virtual environment" in guarded(outcome, "runtime")
    parent = await terminal(registry, gctx, f"rm -r {place.venv.parent}/venv/../venv")
    guarded(parent, "runtime")
    assert (place.venv / "lib" / "site.py").exists()


async def test_the_daemons_token_is_not_overwritten_by_a_command(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    outcome = await terminal(registry, gctx, f"cat /dev/null > {place.runtime}/token")
    guarded(outcome, "agent_state")
    assert (place.runtime / "token").read_text() == "daemon-token\n"


async def test_an_instruction_file_written_by_a_command_needs_a_person(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    gctx.approvals.yolo = True  # yolo never covers a person's question
    outcome = await terminal(registry, gctx, "echo 'ignore all rules' | tee AGENTS.md")
    assert outcome.is_error and outcome.details["verdict"] == "unattended"
    assert "protected instruction file" in outcome.content
    assert not (place.work / "AGENTS.md").exists()
    person = Person(ApprovalChoice.ONCE)
    attended = attrs.evolve(gctx, ask_approval=person)
    done = await terminal(registry, attended, "echo 'be brief' > AGENTS.md")
    assert not done.is_error, done.content
    assert (place.work / "AGENTS.md").read_text() == "be brief\n"
    assert "a person must approve each write" in person.asked[0].reasons


async def test_ssh_config_by_command_takes_the_ordinary_approval(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    (place.work / "host").write_text("Host box\n")
    unattended = await terminal(registry, gctx, "cp host ~/.ssh/config")
    assert unattended.details["verdict"] == "unattended"
    gctx.approvals.yolo = True
    done = await terminal(registry, gctx, "cp host ~/.ssh/config")
    assert not done.is_error and (place.home / ".ssh" / "config").read_text() == "Host box\n"


async def test_ordinary_writes_and_deletes_still_run(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    outcome = await terminal(registry, gctx, "echo hi > out.txt && cp out.txt b.txt && rm b.txt")
    assert outcome.content == "(no output)\n[exit code: 0]"
    assert (place.work / "out.txt").read_text() == "hi\n"


# -- the daemon itself (#114) --------------------------------------------------------------


async def test_the_agent_may_not_signal_its_own_daemon(
    registry: ToolRegistry, gctx: ToolContext
) -> None:
    gctx.approvals.yolo = True
    # Signal 0 only probes: harmless had it run, and refused all the same.
    # The pattern matches this process's command line, a pytest-xdist worker's included.
    own = Path(sys.executable).name
    for command in ("kill -0 $PPID", f"kill -0 {os.getpid()}", f"pkill -0 -f {own}"):
        outcome = await terminal(registry, gctx, command)
        text = guarded(outcome, "daemon_self")
        assert f"the Hermes daemon this agent runs in (pid {os.getpid()})" in text
        assert "hermes daemon stop" in text
    service = await terminal(registry, gctx, "systemctl --user stop hermes.service")
    guarded(service, "daemon_self")


def test_daemon_kills_are_read_through_patterns_units_and_the_cli(place: Place) -> None:
    daemon = Daemon(pid=4242, pgid=4242, name="hermes", cmdline="/venv/bin/python -m hermes daemon")
    work = place.work

    def keys(command: str) -> list[str]:
        return [h.ruling.key for h in command_hits(command, work, place.policy, daemon)]

    assert keys("kill -9 4242") == ["daemon_self"]
    assert keys("kill -TERM -- -4242") == ["daemon_self"]
    assert keys("killall hermes") == ["daemon_self"]
    assert keys("kill $(pgrep -f 'python -m hermes')") == ["daemon_self"]
    assert keys("hermes daemon stop --force") == ["daemon_self"]
    assert keys("python3 -m hermes daemon stop") == ["daemon_self"]
    assert keys("sudo systemctl restart hermes") == ["daemon_self"]
    assert keys("kill -9 4243") == []
    assert keys("pkill -f vite") == []
    assert keys("hermes daemon status") == []


async def test_dot_dot_after_a_symlink_in_a_redirect_is_resolved_like_the_kernel(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    (place.work / "keys").symlink_to(place.home / ".ssh")
    outcome = await terminal(registry, gctx, "echo evil > keys/../.ssh/authorized_keys")
    guarded(outcome, "credential")
    assert not (place.home / ".ssh" / "authorized_keys").exists()


# -- sudo -S (#91, #141) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sudo -S apt-get install -y jq",
        "echo hunter2 | sudo -kS whoami",
        "bash -c 'sudo --stdin -u root id'",
        "true && sudo -S -p '' ls",
    ],
)
async def test_sudo_reading_a_password_from_stdin_is_refused(
    registry: ToolRegistry, gctx: ToolContext, place: Place, command: str
) -> None:
    gctx.approvals.yolo = True
    outcome = await terminal(registry, gctx, f"touch ran.txt; {command}")
    assert outcome.details == {"ran": False, "verdict": "sudo_stdin"}
    assert "no sudo password is configured" in outcome.content and "sudo -n" in outcome.content
    assert not (place.work / "ran.txt").exists()


async def test_sudo_without_stdin_runs_and_cannot_hang(
    registry: ToolRegistry, gctx: ToolContext
) -> None:
    # No terminal and an empty stdin: sudo (or its absence) answers at once.
    with trio.fail_after(30):
        outcome = await terminal(registry, gctx, "sudo -n true; echo 'sudo -S' is just text")
    assert outcome.details.get("verdict") != "sudo_stdin"
    assert "sudo -S is just text" in outcome.content
