"""OAuth for HTTP MCP servers: ``hermes mcp login``'s flow and the daemon's token reuse.

The server is a real subprocess (``oauth_server.py``) whose MCP endpoint is
protected by the SDK's own authorization server (metadata, registration,
``/authorize``, ``/token``); the login's browser is a real HTTP client
following the authorization URL to Hermes' 127.0.0.1 callback.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import httpx2
import pytest
import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.mcp.login import LoginFailed, LoginResult, login
from hermes.mcp.oauth import token_path
from hermes.mcp.probe import probe
from hermes.mcp.supervisor import McpSupervisor
from hermes.model import ModelClient
from hermes.store import StoreClient
from hermes.tools import ToolRegistry

from ..session.helpers import result_text, results_by_id
from .conftest import OPTIONS, OpenSession, mcp_config, ready, wait_until
from .test_servers import call

OAUTH_SERVER = str(Path(__file__).with_name("oauth_server.py"))


@pytest.fixture
async def oauth_url() -> AsyncIterator[str]:
    process = await trio.lowlevel.open_process(
        [sys.executable, OAUTH_SERVER], stdout=subprocess.PIPE, start_new_session=True
    )
    assert process.stdout is not None
    try:
        with trio.fail_after(30):
            data = b""
            while not data.endswith(b"\n"):
                chunk = await process.stdout.receive_some(100)
                assert chunk, "the OAuth server exited before printing its port"
                data += chunk
        yield f"http://127.0.0.1:{int(data)}/mcp"
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()


def server_table(url: str) -> dict[str, object]:
    return {"url": url, "auth": "oauth", "oauth": {"scope": "mcp", "client_name": "Hermes test"}}


async def log_in(url: str, data_dir: Path) -> tuple[list[str], LoginResult]:
    """Run ``login`` with a browser that follows the authorization URL at once."""
    [config] = mcp_config({"locked": server_table(url)}).servers
    shown: list[str] = []

    async def browser(address: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=True, trust_env=False) as web:
            page = await web.get(address)
            assert "Hermes is logged in" in page.text

    async with trio.open_nursery() as nursery:

        def announce(address: str) -> None:
            shown.append(address)
            nursery.start_soon(browser, address)

        with trio.fail_after(60):
            result = await login(config, data_dir, announce)
    return shown, result


async def test_login_stores_the_token_0600_and_the_daemon_reuses_it_on_reconnect(
    open_session: OpenSession,
    system: ActorSystem,
    oauth_url: str,
    base_registry: ToolRegistry,
    store: StoreClient,
    client: ModelClient,
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    shown, result = await log_in(oauth_url, data_dir)
    assert len(shown) == 1 and "/authorize?" in shown[0] and "code_challenge=" in shown[0]
    path = token_path(data_dir, "locked")
    assert result.token_file == path
    assert set(result.tools) == {"grants", "secret_echo"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    saved = json.loads(path.read_text())
    token = saved["tokens"]["access_token"]
    assert saved["url"] == oauth_url and token.startswith("at-")
    assert saved["client"]["client_name"] == "Hermes test"

    config = mcp_config({"locked": server_table(oauth_url)}, osv_check=False)
    probed = await probe(config.servers[0], data_dir=data_dir)  # `hermes mcp test`
    assert (probed["ok"], probed["transport"], probed["listed"]) == (True, "streamable_http", 2)
    unprobed = await probe(config.servers[0], data_dir=tmp_path / "elsewhere")
    assert unprobed["reason"].startswith("not logged in: run `hermes mcp login locked`")
    options = attrs.evolve(OPTIONS, data_dir=data_dir)
    for attempt in (1, 2):  # a second daemon start: a new connection, the same token
        registry = ToolRegistry()
        sup = McpSupervisor(config, registry, options=options)
        ref = await system.spawn(sup, name=f"mcp-{attempt}")
        await wait_until(sup.links["locked"], ready)
        text, is_error, _ = await call(registry, tmp_path, "mcp_locked_grants")
        assert (text, is_error) == ("grants: 1", False)  # no new authorization
        await ref.stop()
    assert json.loads(path.read_text())["tokens"]["access_token"] == token

    # A session's model calls the server's tool; no request it is sent holds the token.
    sup = McpSupervisor(config, base_registry, options=options)
    ref = await system.spawn(sup, name="mcp-3")
    await wait_until(sup.links["locked"], ready)
    session = await open_session()
    fake.enqueue(
        Reply.of(ToolUse("mcp_locked_secret_echo", {"text": "hi"}, id="toolu_s")), Reply.of("ok")
    )
    with trio.fail_after(30):
        await session.run("call it")
    assert result_text(results_by_id(await store.load(session.id))["toolu_s"]) == (
        "authorized echo: hi"
    )
    bodies = json.dumps([r.body for r in fake.message_requests])
    assert "authorized echo: hi" in bodies and token not in bodies
    assert token not in json.dumps(sup.links["locked"].snapshot())
    assert token not in repr(config)
    await ref.stop()


async def test_without_a_login_the_server_is_down_saying_how_to_log_in(
    system: ActorSystem, oauth_url: str, tmp_path: Path
) -> None:
    config = mcp_config({"locked": server_table(oauth_url)}, osv_check=False)
    options = attrs.evolve(OPTIONS, data_dir=tmp_path / "data")
    sup = McpSupervisor(config, ToolRegistry(), options=options)
    await system.spawn(sup, name="mcp")
    link = sup.links["locked"]
    await wait_until(link, lambda link: link.state == "down")
    assert link.reason == (
        "not logged in: run `hermes mcp login locked` (OAuth needs a person once)"
    )


async def test_a_server_without_oauth_is_not_logged_in_to(tmp_path: Path) -> None:
    [config] = mcp_config({"open": {"url": "http://127.0.0.1:9/mcp"}}).servers
    with pytest.raises(LoginFailed, match='not an HTTP server with auth = "oauth"'):
        await login(config, tmp_path, print)


async def test_hermes_mcp_login_prints_the_url_and_saves_the_token(
    oauth_url: str, tmp_path: Path
) -> None:
    from ..daemon.daemon_proc import daemon_env, write_config

    write_config(
        tmp_path,
        f'[mcp.servers.locked]\nurl = "{oauth_url}"\nauth = "oauth"\noauth = {{ scope = "mcp" }}\n',
    )
    env = daemon_env(tmp_path)
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "hermes", "mcp", "login", "locked"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    out = b""
    with trio.fail_after(120):
        while b"/authorize?" not in out or not out.rstrip().endswith(b"..."):
            chunk = await process.stdout.receive_some(4096)
            assert chunk, out
            out += chunk
        address = next(w for w in out.decode().split() if "/authorize?" in w)
        async with httpx2.AsyncClient(follow_redirects=True, trust_env=False) as web:
            assert "Hermes is logged in" in (await web.get(address)).text
        while chunk := await process.stdout.receive_some(4096):
            out += chunk
        assert await process.wait() == 0, (out, await process.stderr.receive_some(65536))
    path = token_path(tmp_path / "data" / "hermes", "locked")
    assert f"locked: logged in; token saved in {path} (mode 0600); 2 tool(s)" in out.decode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["tokens"]["access_token"] not in out.decode()
