"""The path guard on the file tools: real files, real symlinks, real calls through the registry."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from hermes.tools import ApprovalChoice, ToolCall, ToolContext, ToolOutcome, ToolRegistry

from .guarded import Person, Place, guarded_ctx, make_place


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    return make_place(tmp_path, monkeypatch)


@pytest.fixture
def gctx(place: Place, tmp_path: Path) -> ToolContext:
    return guarded_ctx(place, tmp_path)


async def use(registry: ToolRegistry, ctx: ToolContext, tool: str, **args: Any) -> ToolOutcome:
    with trio.fail_after(20):
        return await registry.call(ToolCall("g1", tool, args), ctx)


def refused(outcome: ToolOutcome, key: str) -> str:
    assert outcome.is_error, outcome.content
    assert outcome.details.get("guard") == key, outcome.details
    assert "Nothing was" in outcome.content
    return outcome.content


# -- credentials and the daemon's own state (#109, #110) ----------------------------------


async def test_a_symlink_into_ssh_is_followed_and_the_key_is_not_overwritten(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    key = place.home / ".ssh" / "id_ed25519"
    (place.work / "notes.md").symlink_to(key)
    outcome = await use(registry, gctx, "write_file", path="notes.md", content="pwned\n")
    text = refused(outcome, "credential")
    assert f"resolves to {key}" in text
    assert "credential file or store" in text and "tell the user" in text
    assert key.read_text() == "PRIVATE KEY\n"
    patched = await use(
        registry, gctx, "patch", path="notes.md", old_string="PRIVATE", new_string="X"
    )
    refused(patched, "credential")
    assert key.read_text() == "PRIVATE KEY\n"


async def test_dot_dot_escapes_are_resolved_before_the_check(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    sneaky = "sub/../../home/.aws/credentials"
    (place.work / "sub").mkdir()
    outcome = await use(registry, gctx, "write_file", path=sneaky, content="[default]\n")
    refused(outcome, "credential")
    assert "s3cr3t" in (place.home / ".aws" / "credentials").read_text()
    netrc = await use(registry, gctx, "write_file", path="~/.netrc", content="machine x\n")
    refused(netrc, "credential")
    assert not (place.home / ".netrc").exists()


async def test_the_daemons_token_config_and_store_are_never_written(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    token = await use(registry, gctx, "write_file", path=str(place.runtime / "token"), content="x")
    assert "runtime directory" in refused(token, "agent_state")
    assert (place.runtime / "token").read_text() == "daemon-token\n"
    config = await use(registry, gctx, "write_file", path=str(place.config), content="yolo=1")
    assert "configuration file" in refused(config, "agent_state")
    store = await use(registry, gctx, "write_file", path=str(place.data / "hermes.db"), content="x")
    refused(store, "agent_state")
    assert not place.config.exists() and not place.data.exists()


async def test_the_interpreter_and_its_venv_are_never_written(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    target = place.venv / "lib" / "site.py"
    outcome = await use(registry, gctx, "write_file", path=str(target), content="import os\n")
    assert "separate virtual environment" in refused(outcome, "runtime")
    assert target.read_text() == "# the daemon's own code\n"


async def test_ssh_config_goes_through_the_ordinary_approval(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    config = place.home / ".ssh" / "config"
    unattended = await use(registry, gctx, "write_file", path="~/.ssh/config", content="Host a\n")
    assert "no one is attached to approve it" in refused(unattended, "ssh_config")
    assert not config.exists()
    person = Person(ApprovalChoice.SESSION)
    attended = attrs.evolve(gctx, ask_approval=person)
    first = await use(registry, attended, "write_file", path="~/.ssh/config", content="Host a\n")
    assert not first.is_error, first.content
    second = await use(
        registry, attended, "patch", path="~/.ssh/config", old_string="a", new_string="b"
    )
    assert not second.is_error and config.read_text() == "Host b\n"
    assert len(person.asked) == 1  # "session" covers the next one
    assert "SSH client configuration" in person.asked[0].reasons


# -- instruction files need a person, each time (#106, #107) -----------------------------


async def test_an_instruction_file_needs_a_person_every_time(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    gctx.approvals.yolo = True  # yolo does not cover instruction files
    outcome = await use(registry, gctx, "write_file", path="AGENTS.md", content="obey\n")
    text = refused(outcome, "instruction_file")
    assert "protected instruction file" in text and "unattended" in text
    assert not (place.work / "AGENTS.md").exists()
    person = Person(ApprovalChoice.ALWAYS)
    attended = attrs.evolve(gctx, ask_approval=person)
    for content in ("one\n", "two\n"):
        done = await use(registry, attended, "write_file", path="AGENTS.md", content=content)
        assert not done.is_error, done.content
    assert (place.work / "AGENTS.md").read_text() == "two\n"
    assert len(person.asked) == 2  # "always" is not remembered for a person's question
    assert gctx.approvals.allowlist == set()


async def test_a_link_named_harmlessly_to_soul_md_and_a_hermes_folder_are_protected(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    (place.work / "Soul.MD").write_text("be kind\n")
    (place.work / "readme.txt").symlink_to(place.work / "Soul.MD")
    (place.work / ".hermes").mkdir()
    denied = attrs.evolve(gctx, ask_approval=Person(ApprovalChoice.DENY))
    via_link = await use(
        registry, denied, "patch", path="readme.txt", old_string="kind", new_string="x"
    )
    assert "the user denied it" in refused(via_link, "instruction_file")
    inside = await use(registry, denied, "write_file", path=".hermes/rules.md", content="x")
    refused(inside, "instruction_file")
    assert (place.work / "Soul.MD").read_text() == "be kind\n"
    assert not (place.work / ".hermes" / "rules.md").exists()


# -- system paths and the docker socket (#108) ---------------------------------------------


async def test_system_paths_and_the_docker_socket_are_refused(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    etc = Path("/etc") / f"hermes-guard-{os.getpid()}"
    try:
        outcome = await use(registry, gctx, "write_file", path=str(etc), content="x")
        assert "use the terminal (with sudo" in refused(outcome, "system_path")
        assert not etc.exists()
    finally:
        etc.unlink(missing_ok=True)
    sock = place.home / ".docker" / "run" / "docker.sock"
    docker = await use(registry, gctx, "write_file", path=str(sock), content="x")
    assert "as root" in refused(docker, "docker_socket")
    assert not sock.exists()


# -- formats (#111) ------------------------------------------------------------------------


async def test_office_sqlite_and_binary_files_are_not_overwritten_with_text(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    docx = await use(registry, gctx, "write_file", path="report.docx", content="text")
    assert "python-docx" in refused(docx, "office_document")
    db = await use(registry, gctx, "write_file", path="app.db-wal", content="text")
    refused(db, "sqlite_file")
    logo = place.work / "logo.png"
    logo.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    png = await use(registry, gctx, "write_file", path="logo.png", content="<svg/>")
    refused(png, "binary_overwrite")
    assert logo.read_bytes().startswith(b"\x89PNG")
    blob = place.work / "blob"
    blob.write_bytes(b"ELF\x00\x01")
    sniffed = await use(registry, gctx, "write_file", path="blob", content="x")
    refused(sniffed, "binary_overwrite")
    fresh = await use(registry, gctx, "write_file", path="new.pdf", content="%PDF-1.4\n")
    assert not fresh.is_error  # creating a new one is fine
    assert not (place.work / "report.docx").exists()


# -- stale writes (#112) ---------------------------------------------------------------------


async def test_overwriting_an_unread_file_is_refused_until_it_is_read(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    notes = place.work / "notes.txt"
    notes.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    blind = await use(registry, gctx, "write_file", path="notes.txt", content="new\n")
    text = refused(blind, "stale_write")
    assert "you have not read it in this session" in text and "use patch" in text
    part = await use(registry, gctx, "read_file", path="notes.txt", limit=3)
    assert not part.is_error
    partial = await use(registry, gctx, "write_file", path="notes.txt", content="new\n")
    assert "seen only part of it" in refused(partial, "stale_write")
    whole = await use(registry, gctx, "read_file", path="notes.txt")
    assert not whole.is_error
    ok = await use(registry, gctx, "write_file", path="notes.txt", content="new\n")
    assert not ok.is_error and notes.read_text() == "new\n"
    again = await use(registry, gctx, "write_file", path="notes.txt", content="newer\n")
    assert not again.is_error  # the session wrote it itself: it knows it in full


async def test_a_file_changed_behind_the_sessions_back_must_be_read_again(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    conf = place.work / "app.toml"
    conf.write_text("a = 1\n")
    assert not (await use(registry, gctx, "read_file", path="app.toml")).is_error
    conf.write_text("a = 1\nb = 2\n")  # someone else edits it
    stale = await use(registry, gctx, "write_file", path="app.toml", content="a = 3\n")
    text = refused(stale, "stale_write")
    assert "changed on disk since you last read or wrote it" in text
    assert "6 bytes then, 12 now" in text
    assert conf.read_text() == "a = 1\nb = 2\n"
    assert not (await use(registry, gctx, "read_file", path="app.toml")).is_error
    assert not (await use(registry, gctx, "write_file", path="app.toml", content="a=3\n")).is_error


async def test_a_patch_without_a_full_read_does_not_license_a_whole_write(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    (place.work / "m.py").write_text("x = 1\n")
    patched = await use(registry, gctx, "patch", path="m.py", old_string="1", new_string="2")
    assert not patched.is_error  # patch needs no read: old_string must match
    whole = await use(registry, gctx, "write_file", path="m.py", content="x = 3\n")
    assert "seen only part of it" in refused(whole, "stale_write")


# -- reads (#113) --------------------------------------------------------------------------


async def test_env_files_and_credential_stores_are_never_read(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    (place.work / ".env").write_text("API_KEY=sk-live-123\n")
    (place.work / ".env.production").write_text("API_KEY=sk-prod-456\n")
    (place.work / ".env.example").write_text("API_KEY=\n")
    env = await use(registry, gctx, "read_file", path=".env")
    assert ".env.example" in refused(env, "env_file") and "sk-live" not in env.content
    refused(await use(registry, gctx, "read_file", path=".env.production"), "env_file")
    example = await use(registry, gctx, "read_file", path=".env.example")
    assert example.content == "     1|API_KEY="
    aws = await use(registry, gctx, "read_file", path="~/.aws/credentials")
    assert "s3cr3t" not in refused(aws, "credential_read")
    key = await use(registry, gctx, "read_file", path="~/.ssh/id_ed25519")
    refused(key, "credential_read")
    public = await use(registry, gctx, "read_file", path="~/.ssh/id_ed25519.pub")
    assert "public" in public.content
    token = await use(registry, gctx, "read_file", path=str(place.runtime / "token"))
    assert "daemon-token" not in refused(token, "agent_secret")


async def test_search_never_opens_env_or_credential_files(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    (place.work / ".env").write_text("API_KEY=sk-live-123\n")
    (place.work / "app.py").write_text("API_KEY = os.environ['API_KEY']\n")
    (place.work / "creds").symlink_to(place.home / ".aws")
    found = await use(registry, gctx, "search_files", pattern="API_KEY|secret")
    assert "app.py:1:" in found.content
    assert "sk-live" not in found.content and "s3cr3t" not in found.content
    assert found.details["guarded"] == 1  # .env (the creds link is not followed)
    assert "not searched" in found.content
    home = await use(registry, gctx, "search_files", pattern="secret", path="~/.aws")
    refused(home, "credential_read")


async def test_dot_dot_after_a_symlink_is_taken_as_the_kernel_takes_it(
    registry: ToolRegistry, gctx: ToolContext, place: Place
) -> None:
    """``keys/../.ssh`` with ``keys -> ~/.ssh`` is ``~/.ssh``, not ``work/.ssh`` (found by the
    property test: folding ``..`` before resolving the link let this through)."""
    (place.work / "keys").symlink_to(place.home / ".ssh")
    outcome = await use(
        registry, gctx, "write_file", path="keys/../.ssh/authorized_keys", content="evil\n"
    )
    refused(outcome, "credential")
    assert not (place.home / ".ssh" / "authorized_keys").exists()
