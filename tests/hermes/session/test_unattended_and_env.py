"""``approvals.unattended`` and ``[tools] env_passthrough`` through a session (issue 24, 8-9).

A headless session (no approver attached) refuses a flagged command by
default with the reason, and runs it under ``allow``; neither setting lets the
hardline floor or a line the gate cannot read run, and a subagent's session is
denied whatever its parent says. The tools' children get the named secrets of
the passthrough list, never the provider's key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionConfig, SessionDeps, TurnEnd, start_session
from hermes.store import StoreClient
from hermes.subagents.child import child_config
from hermes.subagents.config import SubagentConfig
from hermes.subagents.tasks import TaskSpec

from .conftest import SessionFactory
from .helpers import assert_valid, result_text, results_by_id


async def _run_command(
    open_session: SessionFactory,
    fake: FakeProvider,
    store: StoreClient,
    command: str,
    **config: Any,
) -> str:
    """Run ``command`` through a headless session made with ``config``; its result text."""
    session = await open_session(**config)
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": command}, id="toolu_c")), Reply.of("ok"))
    with trio.fail_after(20):
        result = await session.run("do it")
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    assert_valid(transcript)
    return result_text(results_by_id(transcript)["toolu_c"])


@pytest.fixture
def build(workdir: Path) -> Path:
    (workdir / "build" / "sub").mkdir(parents=True)
    return workdir / "build"


async def test_headless_deny_refuses_a_flagged_command_with_the_reason(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, build: Path
) -> None:
    text = await _run_command(open_session, fake, store, "rm -rf build")
    assert text.startswith("Command NOT run: it needs approval (recursive delete (rm -r))")
    assert "unattended session" in text
    assert await trio.Path(build).exists()


async def test_headless_allow_runs_a_flagged_command(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, build: Path
) -> None:
    text = await _run_command(
        open_session, fake, store, "rm -rf build", unattended_approvals="allow"
    )
    assert text == "(no output)\n[exit code: 0]"
    assert not await trio.Path(build).exists()


async def test_allow_never_lifts_the_floor(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    # rm never runs even if the line did (echo succeeds); the marker shows whether it ran
    text = await _run_command(
        open_session, fake, store, "echo x > marker || rm -rf /", unattended_approvals="allow"
    )
    assert text.startswith("BLOCKED: this command was NOT run. It matches the hardline")
    assert not await trio.Path(workdir / "marker").exists()


async def test_allow_never_runs_what_the_gate_cannot_read(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient, build: Path
) -> None:
    text = await _run_command(
        open_session, fake, store, "x=rm; $x -rf build", unattended_approvals="allow"
    )
    assert text.startswith("Command NOT run") and "unattended session" in text, text
    assert await trio.Path(build).exists()


async def test_a_subagent_is_denied_whatever_its_parent_allows(
    system: ActorSystem,
    config: SessionConfig,
    deps: SessionDeps,
    fake: FakeProvider,
    store: StoreClient,
    build: Path,
) -> None:
    parent = attrs.evolve(config, unattended_approvals="allow")
    child = child_config(parent, SubagentConfig(), "sub_1", TaskSpec(goal="clean the build"))
    assert child.unattended_approvals == "allow"  # inherited, and still denied below
    session = await start_session(system, child, deps)
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "rm -rf build"}, id="toolu_c")), Reply.of("ok")
    )
    with session.subscribe(approvals=True), trio.fail_after(20):  # even with a watcher
        await session.run("clean")
    text = result_text(results_by_id(await store.load(session.id))["toolu_c"])
    assert text.startswith("Command NOT run") and "unattended session" in text, text
    assert await trio.Path(build).exists()


async def test_env_passthrough_lets_a_named_secret_through_never_the_provider_key(
    system: ActorSystem,
    config: SessionConfig,
    deps: SessionDeps,
    fake: FakeProvider,
    store: StoreClient,
) -> None:
    environ = {
        "PATH": "/usr/bin:/bin",
        "GITHUB_TOKEN": "ghp_passed_on",
        "NPM_TOKEN": "npm_kept_back",
        "ANTHROPIC_API_KEY": "sk-ant-never",
        "ANTHROPIC_AUTH_TOKEN": "auth-never",
    }
    passthrough = ("GITHUB_TOKEN", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    session = await start_session(
        system,
        attrs.evolve(config, env_passthrough=passthrough),
        attrs.evolve(deps, environ=environ),
    )
    fake.enqueue(Reply.of(ToolUse("terminal", {"command": "env"}, id="toolu_env")), Reply.of("ok"))
    with trio.fail_after(20):
        await session.run("show the environment")
    text = result_text(results_by_id(await store.load(session.id))["toolu_env"])
    assert "GITHUB_TOKEN=ghp_passed_on" in text
    assert "npm_kept_back" not in text and "NPM_TOKEN" not in text
    assert "sk-ant-never" not in text and "auth-never" not in text
    assert "ANTHROPIC" not in text
