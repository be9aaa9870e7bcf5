"""Origin and Host checks (cross-site pages, DNS rebinding): a real daemon, real sockets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import trio
import trio_websocket

from tests.hermes.daemon.daemon_proc import Daemon, running_daemon

CONFIG = """
[daemon]
unix_socket = true
[gateway]
allowed_origins = ["http://app.example:3000"]
allowed_hosts = ["hermes.internal"]
"""


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("origin"), CONFIG) as d:
        yield d


def address(daemon: Daemon) -> tuple[str, int]:
    assert daemon.endpoint is not None
    return daemon.endpoint.info["host"], daemon.endpoint.info["port"]


async def exchange(daemon: Daemon, head: str, unix: bool = False) -> tuple[int, dict[str, Any]]:
    """Send a request head on a new connection; the status and the JSON body."""
    if unix:
        stream: trio.abc.Stream = await trio.open_unix_socket(str(daemon.paths.socket_file))
    else:
        stream = await trio.open_tcp_stream(*address(daemon))
    async with stream:
        await stream.send_all(head.encode())
        data = b""
        while chunk := await stream.receive_some(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    body = rest.split(b"\r\n\r\n", 1)[1]
    return int(status_line.split()[1]), json.loads(body) if body else {}


async def get(
    daemon: Daemon,
    host: str | None = "default",
    origin: str | None = None,
    token: bool = True,
    unix: bool = False,
    websocket: bool = False,
) -> tuple[int, dict[str, Any]]:
    ip, port = address(daemon)
    lines = ["GET /ws HTTP/1.1" if websocket else "GET /health HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {f'{ip}:{port}' if host == 'default' else host}")
    if origin is not None:
        lines.append(f"Origin: {origin}")
    if token:
        lines.append(f"Authorization: Bearer {daemon.token}")
    if websocket:
        lines += [
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
        ]
    return await exchange(daemon, "\r\n".join(lines) + "\r\n\r\n", unix)


async def test_local_hosts_and_origins_are_served(daemon: Daemon) -> None:
    ip, port = address(daemon)
    with trio.fail_after(60):
        for host in (
            "default",
            ip,
            "localhost",
            f"LocalHost:{port}",
            "localhost:8080",  # with or without the port: an SSH tunnel's port is fine
            f"[::1]:{port}",
            "hermes.internal",  # gateway.allowed_hosts
            None,  # HTTP/1.0 clients may send none
        ):
            status, body = await get(daemon, host=host)
            assert status == 200 and body["result"]["pid"] == daemon.proc.pid, (host, body)  # type: ignore[union-attr]
        for origin in (
            f"http://127.0.0.1:{port}",
            f"http://localhost:{port}",
            f"http://[::1]:{port}",
            "http://app.example:3000",  # gateway.allowed_origins
        ):
            status, body = await get(daemon, origin=origin)
            assert status == 200, (origin, body)


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io:{port}", "localhost.evil.example"],
)
async def test_a_foreign_host_is_refused(daemon: Daemon, host: str) -> None:
    _, port = address(daemon)
    host = host.format(port=port)
    with trio.fail_after(30):
        for websocket in (False, True):
            status, body = await get(daemon, host=host, websocket=websocket)
            assert status == 403, body
            assert body["error"]["code"] == "forbidden_host"
            message = body["error"]["message"]
            assert "Host header" in message and repr(host) in message
            assert "allowed_hosts" in message and "sessions" not in json.dumps(body)


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "https://evil.example:{port}",
        "http://localhost:{other}",  # another local web app
        "https://localhost:{port}",
        "http://evil.example:{port}",
        "null",
    ],
)
async def test_a_cross_site_origin_is_refused(daemon: Daemon, origin: str) -> None:
    _, port = address(daemon)
    origin = origin.format(port=port, other=port + 1 if port < 65535 else port - 1)
    with trio.fail_after(30):
        for websocket in (False, True):
            for token in (True, False):  # refused before the token is even looked at
                status, body = await get(daemon, origin=origin, websocket=websocket, token=token)
                assert status == 403, body
                assert body["error"]["code"] == "forbidden_origin"
                message = body["error"]["message"]
                assert "Origin header" in message and repr(origin) in message


async def test_a_websocket_client_with_a_local_origin_connects_and_a_foreign_one_is_rejected(
    daemon: Daemon,
) -> None:
    _, port = address(daemon)
    auth = (b"authorization", f"Bearer {daemon.token}".encode())
    with trio.fail_after(30):
        headers = [auth, (b"origin", f"http://localhost:{port}".encode())]
        async with trio_websocket.open_websocket_url(daemon.ws, extra_headers=headers) as ws:
            await ws.send_message(json.dumps({"id": 1, "method": "daemon.status", "params": {}}))
            answer = json.loads(await ws.get_message())
            assert answer["id"] == 1 and "result" in answer
        rejected: list[trio_websocket.ConnectionRejected] = []
        headers = [auth, (b"origin", b"http://evil.example")]
        stream = await trio.open_tcp_stream(*address(daemon))
        async with stream:  # our own stream, so it is closed on the way out
            try:
                async with trio.open_nursery() as nursery:
                    await trio_websocket.wrap_client_stream(
                        nursery, stream, f"127.0.0.1:{port}", "/ws", extra_headers=headers
                    )
            except* trio_websocket.ConnectionRejected as group:
                rejected += group.exceptions  # type: ignore[arg-type]
        assert [r.status_code for r in rejected] == [403]
        assert json.loads(rejected[0].body or b"{}")["error"]["code"] == "forbidden_origin"


async def test_malformed_or_repeated_host_headers_are_bad_requests(daemon: Daemon) -> None:
    ip, port = address(daemon)
    with trio.fail_after(30):
        for host in ("localhost:http", "[::1", "localhost:0", ":80"):
            status, body = await get(daemon, host=host)
            assert status == 400 and "Host header" in body["error"]["message"], (host, body)
        head = (
            f"GET /health HTTP/1.1\r\nHost: {ip}:{port}\r\nHost: evil.example\r\n"
            f"Authorization: Bearer {daemon.token}\r\n\r\n"
        )
        status, body = await exchange(daemon, head)
        assert status == 400 and "more than one Host header" in body["error"]["message"]


async def test_the_unix_socket_checks_the_origin_but_not_the_host(daemon: Daemon) -> None:
    with trio.fail_after(30):
        status, body = await get(daemon, host="hermes", unix=True)
        assert status == 200, body
        status, body = await get(daemon, host="hermes", origin="http://localhost:5173", unix=True)
        assert status == 200, body
        status, body = await get(daemon, host="hermes", origin="http://evil.example", unix=True)
        assert status == 403 and body["error"]["code"] == "forbidden_origin"
