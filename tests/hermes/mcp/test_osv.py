"""The OSV malware check before an npx/uvx/pipx server starts, against a local fake OSV API."""

from __future__ import annotations

import functools
import json
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.fake.http11 import parse_head, response_head
from hermes.mcp.osv import OsvChecker, Package, launched_package

from .conftest import SERVER, StartMcp, ready, wait_until

ADVISORIES = {
    "evil": [{"id": "MAL-2025-1234"}, {"id": "GHSA-aaaa-bbbb-cccc"}],
    "cvey": [{"id": "CVE-2024-0001"}],
}


class FakeOsv:
    """OSV's query endpoint on 127.0.0.1: answers from ``ADVISORIES``, records each body."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.url = ""

    async def handle(self, stream: trio.SocketStream) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = await stream.receive_some(4096)
            if not chunk:
                return
            data += chunk
        head_bytes, _, body = data.partition(b"\r\n\r\n")
        head = parse_head(head_bytes)
        while len(body) < head.content_length:
            body += await stream.receive_some(4096)
        asked = json.loads(body)
        self.bodies.append(asked)
        answer = json.dumps({"vulns": ADVISORIES.get(asked["package"]["name"], [])}).encode()
        headers = [(b"content-type", b"application/json")]
        await stream.send_all(response_head(200, headers, length=len(answer), close=True) + answer)
        await stream.aclose()


@pytest.fixture
async def osv(nursery: trio.Nursery) -> AsyncIterator[FakeOsv]:
    fake = FakeOsv()
    serve = functools.partial(trio.serve_tcp, host="127.0.0.1")
    [listener] = await nursery.start(serve, fake.handle, 0)
    fake.url = f"http://127.0.0.1:{listener.socket.getsockname()[1]}/v1/query"
    yield fake


def fake_launcher(directory: Path, name: str) -> str:
    """An executable called ``name`` (npx, uvx) that ignores its arguments and runs the server."""
    path = directory / name
    path.write_text(f"#!/bin/sh\nexec {sys.executable} {SERVER}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize(
    ("command", "args", "package"),
    [
        (
            "npx",
            ["-y", "@modelcontextprotocol/server-github"],
            Package("npm", "@modelcontextprotocol/server-github"),
        ),
        (
            "/usr/bin/npx",
            ["--yes", "@scope/tool@1.2.3", "--flag"],
            Package("npm", "@scope/tool", "1.2.3"),
        ),
        ("npx", ["--package=left-pad@1.3.0", "left-pad"], Package("npm", "left-pad", "1.3.0")),
        ("uvx", ["mcp-server-fetch"], Package("PyPI", "mcp-server-fetch")),
        (
            "uvx",
            ["--from", "mcp-server-git==0.6.2", "mcp-server-git"],
            Package("PyPI", "mcp-server-git", "0.6.2"),
        ),
        ("uv", ["tool", "run", "--python", "3.12", "mcp-x"], Package("PyPI", "mcp-x")),
        ("pipx", ["run", "some-server[extra]==2.0"], Package("PyPI", "some-server", "2.0")),
        ("pipx", ["install", "x"], None),
        ("python", ["-m", "server"], None),
        ("npx", ["-y"], None),
    ],
)
def test_the_launched_package_is_read_from_the_command_line(
    command: str, args: list[str], package: Package | None
) -> None:
    assert launched_package(command, args) == package


async def test_a_package_with_a_malware_advisory_is_not_started(
    start_mcp: StartMcp, osv: FakeOsv, tmp_path: Path
) -> None:
    npx = fake_launcher(tmp_path, "npx")
    mcp = await start_mcp(
        {"evil": {"command": npx, "args": ["-y", "evil@1.0.0"]}},
        osv_check=True,
        osv_url=osv.url,
    )
    link = mcp.link("evil")
    await wait_until(link, lambda link: link.state == "down")
    assert link.reason == (
        "not started: npm package evil@1.0.0 has a malware advisory in OSV (MAL-2025-1234)"
    )
    assert osv.bodies == [{"package": {"name": "evil", "ecosystem": "npm"}, "version": "1.0.0"}]
    assert mcp.registry.names() == ()


async def test_ordinary_advisories_and_an_unreachable_osv_let_the_server_start(
    start_mcp: StartMcp, osv: FakeOsv, tmp_path: Path
) -> None:
    npx, uvx = fake_launcher(tmp_path, "npx"), fake_launcher(tmp_path, "uvx")
    mcp = await start_mcp(
        {"cve": {"command": npx, "args": ["-y", "cvey"]}}, osv_check=True, osv_url=osv.url
    )
    await wait_until(mcp.link("cve"), ready)
    assert osv.bodies == [{"package": {"name": "cvey", "ecosystem": "npm"}}]
    await mcp.ref.stop()

    with trio.socket.socket() as unused:  # a port nobody listens on: fail-open
        await unused.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{unused.getsockname()[1]}/v1/query"
    mcp = await start_mcp(
        {"offline": {"command": uvx, "args": ["evil"]}}, osv_check=True, osv_url=closed
    )
    await wait_until(mcp.link("offline"), ready)


async def test_verdicts_are_cached_for_an_hour(
    osv: FakeOsv, autojump_clock: trio.abc.Clock
) -> None:
    checker = OsvChecker(osv.url)
    evil, fine = Package("npm", "evil"), Package("PyPI", "fine")
    assert await checker.malware(evil) == ("MAL-2025-1234",)
    assert await checker.malware(fine) == ()
    assert await checker.malware(evil) == ("MAL-2025-1234",)
    assert checker.queries == 2
    await trio.sleep(3601)
    assert await checker.malware(evil) == ("MAL-2025-1234",)
    assert checker.queries == 3
