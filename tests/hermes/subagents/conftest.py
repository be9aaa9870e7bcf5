"""Subagent fixtures over the shared fake (scripted only), client (two attempts) and store.

Parents and children share the fake provider; replies are routed per request
with rules (``when``): a child's system prompt names its task (``# Your task
(sa-...)`` and the goal), its first user message is ``Begin your task: <goal>``.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from actors import ActorSystem
from hermes.fake import FakeProvider, MessagesRequest
from hermes.model import ModelClient
from hermes.session import SessionConfig, SessionDeps, SessionHandle, start_session
from hermes.store import StoreClient
from hermes.subagents import SubagentConfig, SubagentRuntime, with_delegation
from hermes.tools import default_registry

from ..fake_model import SCRIPTED, FakeSetup

MODEL = "claude-test"

FAST = SubagentConfig(check_interval=0.05)
"""Liveness looked at every 50 ms; everything else at Hermes' defaults."""


@pytest.fixture
def fake_setup() -> FakeSetup:
    return SCRIPTED


@pytest.fixture
def retry_attempts() -> int:
    return 2


@pytest.fixture
def config(workdir: Path, tmp_path: Path) -> SessionConfig:
    return SessionConfig(
        model=MODEL, cwd=workdir, spill_dir=tmp_path / "spill", load_context_files=False
    )


Parent = Callable[..., Awaitable[tuple[SessionHandle, SubagentRuntime]]]


@pytest.fixture
def open_parent(
    system: ActorSystem, config: SessionConfig, store: StoreClient, client: ModelClient
) -> Parent:
    """Start a delegating session; keyword arguments override ``SubagentConfig`` fields
    (``session=dict(...)`` overrides ``SessionConfig`` fields, ``runtime=`` shares one)."""
    started = itertools.count(1)

    async def start(
        *,
        session: dict[str, Any] | None = None,
        runtime: SubagentRuntime | None = None,
        session_id: str | None = None,
        **overrides: Any,
    ) -> tuple[SessionHandle, SubagentRuntime]:
        rt = runtime or SubagentRuntime(attrs.evolve(FAST, **overrides))
        deps = SessionDeps(
            store=store,
            client=client,
            registry=with_delegation(default_registry()),
            subagents=rt.host(),
        )
        handle = await start_session(
            system,
            attrs.evolve(config, **(session or {})),
            deps,
            session_id=session_id,
            name=f"parent-{next(started)}",
        )
        return handle, rt

    return start


def system_of(req: MessagesRequest) -> str:
    system = req.body.get("system", "")
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in system)


def child_of(goal_marker: str) -> Callable[[MessagesRequest], bool]:
    """A predicate: the request comes from the child whose goal holds ``goal_marker``."""

    def match(req: MessagesRequest) -> bool:
        return "# Your task (sa-" in system_of(req) and goal_marker in system_of(req)

    return match


def is_parent(req: MessagesRequest) -> bool:
    return "# Your task (sa-" not in system_of(req)


def script_parent(fake: FakeProvider, delegate: dict[str, Any], final: str = "parent done") -> None:
    """The parent calls ``delegate_task(**delegate)`` once, then answers ``final``."""
    from hermes.fake import Reply, ToolUse

    fake.when(
        Reply.of(ToolUse("delegate_task", delegate)),
        predicate=lambda r: is_parent(r) and not r.tool_results(),
        times=1,
    )
    fake.when(Reply.of(final), predicate=lambda r: is_parent(r) and bool(r.tool_results()))


def script_middle_and_leaf(
    fake: FakeProvider, middle_goal: str, *, orchestrate: bool, relayed: str
) -> None:
    """The parent delegates ``middle_goal`` (asking ``orchestrate``); that child delegates
    ``bottom-level chore`` (answered ``leaf answer``), then answers ``relayed``."""
    from hermes.fake import Reply, ToolUse

    def middle(req: MessagesRequest) -> Reply:
        if req.tool_results():
            return Reply.of(relayed)
        return Reply.of(ToolUse("delegate_task", {"goal": "bottom-level chore"}))

    fake.when(Reply.of("leaf answer"), predicate=child_of("bottom-level chore"))
    fake.when(middle, predicate=child_of(middle_goal))
    script_parent(fake, {"goal": middle_goal, "orchestrate": orchestrate})


def pids_named(name: str) -> list[int]:
    """Pids of live (non-zombie) processes in this process's tree whose command is ``name``."""
    import os

    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if comm == name and fields[0] != "Z" and _descends_from_us(int(pid)):
            found.append(int(pid))
    return found


def _descends_from_us(pid: int) -> bool:
    import os

    me = os.getpid()
    for _ in range(64):
        if pid == me:
            return True
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            return False
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if pid <= 1:
            return False
    return False
