"""Connection slots end to end: idle connections without the token cannot lock the owner
out (TCP or unix socket), the unix socket serves only the owner's uid, and plain HTTP
beyond ``max_connections`` reads a whole 503."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.gateway.client import connect
from tests.hermes.daemon.daemon_proc import Daemon, running_daemon


def host_port(daemon: Daemon) -> tuple[str, int]:
    assert daemon.endpoint is not None
    return daemon.endpoint.info["host"], int(daemon.endpoint.info["port"])


async def idle_connections(daemon: Daemon, n: int) -> list[trio.SocketStream]:
    """``n`` TCP connections that never send a byte (another user without the token)."""
    host, port = host_port(daemon)
    return [await trio.open_tcp_stream(host, port) for _ in range(n)]


async def read_all(stream: trio.abc.ReceiveStream) -> bytes:
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    return data


def status_and_body(data: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    assert len(body) == length, f"short body: {len(body)} of {length} bytes"
    return int(head.split()[1]), json.loads(body)


async def owner_status(daemon: Daemon) -> dict[str, Any]:
    async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
        status: dict[str, Any] = await client.call("daemon.status")
    return status


async def test_idle_connections_without_the_token_do_not_lock_the_owner_out(
    tmp_path: Path,
) -> None:
    # Before: every accepted connection took one of max_connections until its head
    # timed out (10 s), so 12 idle sockets left the owner a 503 or a reset.
    with running_daemon(tmp_path, "[gateway]\nmax_connections = 8\n") as daemon:
        with trio.fail_after(120):
            idle = await idle_connections(daemon, 12)
            try:
                for _ in range(3):
                    status = await owner_status(daemon)
                    assert status["pid"] == daemon.proc.pid  # type: ignore[union-attr]
            finally:
                for stream in idle:
                    await stream.aclose()


async def test_a_full_handshake_pool_drops_its_oldest_and_admits_the_owner(
    tmp_path: Path,
) -> None:
    config = "[gateway]\nmax_unauthenticated = 4\nhandshake_timeout = 60.0\n"
    with running_daemon(tmp_path, config) as daemon:
        with trio.fail_after(120):
            idle = await idle_connections(daemon, 10)
            try:
                # The six oldest were dropped to make room, each told why.
                for stream in idle[:6]:
                    code, body = status_and_body(await read_all(stream))
                    assert code == 503 and body["error"]["code"] == "overloaded"
                    assert "handshake" in body["error"]["message"]
                status = await owner_status(daemon)
                assert status["pid"] == daemon.proc.pid  # type: ignore[union-attr]
            finally:
                for stream in idle:
                    await stream.aclose()


async def test_plain_http_beyond_max_connections_reads_a_whole_503(tmp_path: Path) -> None:
    # Before: the 503 was written before the request was read, and the close with the
    # request unread made the kernel reset the connection (curl: "connection reset").
    with running_daemon(tmp_path, "[gateway]\nmax_connections = 2\n") as daemon:
        host, port = host_port(daemon)
        body = b'{"title": "over the limit"}'
        request = (
            f"POST /sessions HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {daemon.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        with trio.fail_after(120):
            async with connect(daemon.endpoint) as a, connect(daemon.endpoint) as b:  # type: ignore[arg-type]
                await a.call("daemon.status")
                await b.call("daemon.status")
                for _ in range(3):
                    stream = await trio.open_tcp_stream(host, port)
                    async with stream:
                        await stream.send_all(request)
                        status, answer = status_and_body(await read_all(stream))
                    assert status == 503 and answer["error"]["code"] == "overloaded"
                    assert "too many connections (2)" in answer["error"]["message"]
            # The two slots are free again once the daemon has seen both clients leave:
            # the same request is served.
            while True:
                stream = await trio.open_tcp_stream(host, port)
                async with stream:
                    await stream.send_all(request)
                    status, answer = status_and_body(await read_all(stream))
                if status != 503:
                    break
                await trio.sleep(0.1)  # the daemon is still ending those connections
            assert status == 200 and answer["result"]["id"]


# -- the unix socket -----------------------------------------------------------------------

NOBODY = 65534

_OTHER_USER = """
import os, socket, sys, time
os.chdir(sys.argv[1])           # as root: no need to traverse the parents as nobody
os.setgid(65534); os.setuid(65534)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(float(sys.argv[2]))
sock.connect("hermes.sock")
start = time.monotonic()
try:
    data = sock.recv(65536)
    print("closed" if data == b"" else "data:" + data[:200].decode("latin-1"))
except socket.timeout:
    print("still open")
except ConnectionResetError:
    print("closed")
print(round(time.monotonic() - start, 3))
"""


def unix_http(path: Path, token: str, timeout: float = 60.0) -> tuple[int, dict[str, Any]]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(
            f"GET /health HTTP/1.1\r\nHost: hermes\r\nAuthorization: Bearer {token}"
            "\r\n\r\n".encode()
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return status_and_body(data)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another uid")
def test_the_unix_socket_refuses_another_uid_and_keeps_serving_the_owner(tmp_path: Path) -> None:
    config = "[daemon]\nunix_socket = true\n[gateway]\nmax_unauthenticated = 2\n"
    with running_daemon(tmp_path, config) as daemon:
        sock = daemon.paths.socket_file
        # A careless mode lets the other user reach the socket; the peer check still holds.
        os.chmod(sock.parent, 0o711)
        os.chmod(sock, 0o666)
        holders = [
            subprocess.Popen(
                [sys.executable, "-c", _OTHER_USER, str(sock.parent), "30"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        outs = []
        for proc in holders:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            answer, seconds = out.splitlines()
            outs.append((answer, seconds))
        # Before: each was served like the owner, holding a slot until its head timed out.
        assert all(answer == "closed" for answer, _ in outs), outs
        assert all(float(seconds) < 20 for _, seconds in outs), outs
        token = daemon.paths.token_file.read_text().strip()
        status, body = unix_http(sock, token)
        assert status == 200 and body["result"]["pid"] == daemon.proc.pid  # type: ignore[union-attr]
        assert f"uid {NOBODY}" in daemon.paths.log_file.read_text()


async def test_unix_socket_owner_gets_in_while_tcp_handshakes_are_full(tmp_path: Path) -> None:
    config = "[daemon]\nunix_socket = true\n[gateway]\nmax_connections = 4\n"
    with running_daemon(tmp_path, config) as daemon:
        token = daemon.paths.token_file.read_text().strip()
        with trio.fail_after(120):
            async with (
                connect(daemon.endpoint) as a,  # type: ignore[arg-type]
                connect(daemon.endpoint) as b,  # type: ignore[arg-type]
                connect(daemon.endpoint) as c,  # type: ignore[arg-type]
                connect(daemon.endpoint) as d,  # type: ignore[arg-type]
            ):
                for client in (a, b, c, d):
                    await client.call("daemon.status")
                # Every authenticated TCP slot is taken; the owner's reserve is not.
                start = time.monotonic()
                stream = await trio.open_unix_socket(str(daemon.paths.socket_file))
                async with stream:
                    await stream.send_all(
                        f"GET /health HTTP/1.1\r\nHost: hermes\r\nAuthorization: Bearer "
                        f"{token}\r\n\r\n".encode()
                    )
                    status, body = status_and_body(await read_all(stream))
                assert status == 200, body
                assert time.monotonic() - start < 60
                host, port = host_port(daemon)
                tcp = await trio.open_tcp_stream(host, port)
                async with tcp:
                    await tcp.send_all(
                        f"GET /health HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer "
                        f"{token}\r\n\r\n".encode()
                    )
                    status, _ = status_and_body(await read_all(tcp))
                assert status == 503
