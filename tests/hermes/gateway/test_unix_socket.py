"""The optional unix socket: mode 0600, the same token, the same HTTP and WebSocket protocol."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from typing import Any

import pytest
import trio
import trio_websocket

from tests.hermes.daemon.daemon_proc import Daemon, running_daemon


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("unix"), "[daemon]\nunix_socket = true\n") as d:
        yield d


async def http_over_unix(
    daemon: Daemon, path: str, token: str | None
) -> tuple[int, dict[str, Any]]:
    stream = await trio.open_unix_socket(str(daemon.paths.socket_file))
    async with stream:
        auth = f"Authorization: Bearer {token}\r\n" if token is not None else ""
        head = f"GET {path} HTTP/1.1\r\nHost: hermes\r\n{auth}Connection: close\r\n\r\n"
        await stream.send_all(head.encode())
        data = b""
        while chunk := await stream.receive_some(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    body = rest.split(b"\r\n\r\n", 1)[1]
    return int(status_line.split()[1]), json.loads(body)


async def test_the_unix_socket_is_private_and_speaks_http_and_websocket(daemon: Daemon) -> None:
    sock = daemon.paths.socket_file
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert daemon.endpoint is not None and daemon.endpoint.info["unix"] == str(sock)
    token = daemon.paths.token_file.read_text().strip()
    with trio.fail_after(20):
        status, body = await http_over_unix(daemon, "/health", token)
        assert status == 200 and body["result"]["pid"] == daemon.proc.pid  # type: ignore[union-attr]
        status, body = await http_over_unix(daemon, "/sessions", None)
        assert status == 401 and "token" in body["error"]["message"]

        stream = await trio.open_unix_socket(str(sock))
        async with trio.open_nursery() as nursery:
            ws = await trio_websocket.wrap_client_stream(
                nursery,
                stream,
                "hermes",
                "/ws",
                extra_headers=[(b"authorization", f"Bearer {token}".encode())],
            )
            request = {"id": 1, "method": "session.create", "params": {}}
            await ws.send_message(json.dumps(request))
            reply = json.loads(await ws.get_message())
            await ws.aclose()
        assert reply["id"] == 1 and reply["result"]["id"]
