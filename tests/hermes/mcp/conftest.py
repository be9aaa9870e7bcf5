"""MCP fixtures: real MCP servers (``mcp_server.py``) as subprocesses, a supervisor over them."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from actors import ActorRef, ActorSystem
from hermes.mcp import McpConfig, parse_mcp
from hermes.mcp.link import ServerLink
from hermes.mcp.sampling import Sampler
from hermes.mcp.server import McpOptions
from hermes.mcp.supervisor import McpSupervisor
from hermes.model import ModelClient
from hermes.session import SessionConfig, SessionDeps, SessionHandle, start_session
from hermes.store import StoreClient
from hermes.tools import ToolRegistry, default_registry
from supervisors import Backoff

SERVER = str(Path(__file__).with_name("mcp_server.py"))
OPTIONS = McpOptions(
    backoff=Backoff(min=2.0, max=4.0, random_factor=0.0), stop_grace=0.5, ping_interval=0.5
)


def stdio(**extra: Any) -> dict[str, Any]:
    """A ``[mcp.servers.NAME]`` table for the test server over stdio."""
    table: dict[str, Any] = {"command": sys.executable, "args": [SERVER]}
    table.update(extra)
    return table


def mcp_config(servers: dict[str, dict[str, Any]], **top: Any) -> McpConfig:
    """The ``[mcp]`` table with these servers (and top-level keys), parsed."""
    config, errors = parse_mcp({"servers": servers, **top}, "test.toml")
    assert errors == []
    return config


async def wait_until(
    link: ServerLink, ok: Callable[[ServerLink], bool], timeout: float = 30
) -> None:
    """Wait (on the link's change events) until ``ok(link)``."""
    with trio.fail_after(timeout):
        while not ok(link):
            await link.changed.wait()


def ready(link: ServerLink) -> bool:
    return link.state == "ready"


class Running:
    """A spawned ``McpSupervisor`` and what the tests need of it."""

    def __init__(self, sup: McpSupervisor, ref: ActorRef, registry: ToolRegistry) -> None:
        self.sup, self.ref, self.registry = sup, ref, registry

    def link(self, name: str) -> ServerLink:
        return self.sup.links[name]


StartMcp = Callable[..., Any]


@pytest.fixture
def start_mcp(system: ActorSystem) -> StartMcp:
    """Spawn an ``McpSupervisor`` for ``servers`` over a fresh (or given) registry."""

    async def start(
        servers: dict[str, dict[str, Any]],
        registry: ToolRegistry | None = None,
        environ: dict[str, str] | None = None,
        sampler: Sampler | None = None,
        **top: Any,
    ) -> Running:
        registry = ToolRegistry() if registry is None else registry
        top.setdefault("osv_check", False)  # the tests that want it point it at a local fake
        config = mcp_config(servers, **top)
        sup = McpSupervisor(config, registry, environ=environ, options=OPTIONS, sampler=sampler)
        ref = await system.spawn(sup, name="mcp")
        return Running(sup, ref, registry)

    return start


@pytest.fixture
def base_registry() -> ToolRegistry:
    return default_registry()


OpenSession = Callable[..., Awaitable[SessionHandle]]


@pytest.fixture
def open_session(
    system: ActorSystem,
    store: StoreClient,
    client: ModelClient,
    base_registry: ToolRegistry,
    tmp_path: Path,
) -> OpenSession:
    """Start a session over the test store, model and ``base_registry`` (with any MCP tools
    a test registered in it), working in ``tmp_path / name``."""

    async def open_one(name: str = "work") -> SessionHandle:
        work = tmp_path / name
        work.mkdir()
        config = SessionConfig(model="claude-test", cwd=work, spill_dir=tmp_path / f"spill-{name}")
        deps = SessionDeps(store=store, client=client, registry=base_registry)
        return await start_session(system, config, deps, name=name)

    return open_one
