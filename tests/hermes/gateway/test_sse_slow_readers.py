"""The HTTP event stream with readers that read slowly or not at all (a real daemon, raw sockets).

A slow reader makes the daemon's writes block. Each event must still arrive
whole, with keepalive comments only between events; a reader that stops
reading is dropped after the write deadline while everyone else is served.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from hermes.gateway.client import Client, connect
from hermes.gateway.http_api import WRITE_TIMEOUT
from tests.hermes.daemon.daemon_proc import LONG_PROMPT, SLOW, Daemon, running_daemon
from tests.hermes.gateway.test_gateway import ahttp, new_session, until

BIG_PROMPT = " ".join([LONG_PROMPT] * 16)
"""~30 KB: its ``turn.started`` event is one large write to the reader."""


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    # A short keepalive interval: a keepalive is due while a blocked event write is under way.
    config = SLOW + "[gateway]\nsse_keepalive = 0.1\n"
    with running_daemon(tmp_path_factory.mktemp("sse"), config) as d:
        yield d


async def open_events(daemon: Daemon, session: str) -> trio.socket.SocketType:
    """A raw socket with a small receive buffer, subscribed to ``session``'s events."""
    assert daemon.endpoint is not None
    host, port = daemon.endpoint.info["host"], daemon.endpoint.info["port"]
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)  # before connect: a small window
    await sock.connect((host, port))
    head = (
        f"GET /sessions/{session}/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {daemon.token}\r\n\r\n"
    )
    await sock.send(head.encode())
    return sock


def sse_blocks(raw: bytes) -> list[list[str]]:
    """The complete blocks (lines up to a blank line) of an event-stream response."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    assert sep and head.startswith(b"HTTP/1.1 200 "), head[:200]
    complete = body[: body.rfind(b"\n\n") + 2] if b"\n\n" in body else b""
    return [block.split("\n") for block in complete.decode().split("\n\n")[:-1]]


def check_whole(blocks: list[list[str]]) -> list[dict[str, Any]]:
    """Each block is a comment block or one whole event; the events' frames."""
    frames = []
    for lines in blocks:
        if any(line.startswith(":") for line in lines):
            assert all(line.startswith(":") for line in lines), f"comment inside an event: {lines}"
            continue
        fields = dict(line.split(": ", 1) for line in lines)
        assert sorted(fields) == ["data", "event", "id"] and len(lines) == 3, lines
        frame = json.loads(fields["data"])
        assert frame["type"] == fields["event"] and str(frame["seq"]) == fields["id"]
        frames.append(frame)
    return frames


async def run_turns(client: Client, session: str, turns: int) -> None:
    await client.call("events.subscribe", session=session)
    for _ in range(turns):
        accepted = await client.call("prompt.submit", session=session, text=BIG_PROMPT)
        assert accepted["how"] == "started"
        await until(client, "turn.completed", session)


def _completed(raw: bytearray) -> int:
    """How many whole ``turn.completed`` events ``raw`` holds."""
    return raw.count(b"event: turn.completed\n", 0, raw.rfind(b"\n\n"))


async def test_a_slow_reader_gets_every_event_whole(daemon: Daemon) -> None:
    turns = 3
    raw = bytearray()
    with trio.fail_after(180):
        async with connect(daemon.endpoint) as client:
            session = await new_session(client)
            sock = await open_events(daemon, session)
            with sock:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(run_turns, client, session, turns)
                    # 256 bytes at a time, with pauses: the daemon's writes block.
                    while _completed(raw) < turns:
                        chunk = await sock.recv(256)
                        assert chunk, f"the stream ended early: {bytes(raw[-300:])!r}"
                        raw += chunk
                        await trio.sleep(0.005)
    frames = check_whole(sse_blocks(bytes(raw)))
    kinds = [f["type"] for f in frames]
    assert kinds.count("turn.completed") == turns
    assert [f["payload"]["prompt"] for f in frames if f["type"] == "turn.started"] == [
        BIG_PROMPT
    ] * turns


def _dropped(sock: trio.socket.SocketType) -> bool:
    """The peer reset the connection (seen without reading from it)."""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))


async def test_a_reader_that_stops_reading_is_dropped(daemon: Daemon) -> None:
    assert daemon.endpoint is not None
    with trio.fail_after(180):
        async with connect(daemon.endpoint) as client:
            session = await new_session(client)
            sock = await open_events(daemon, session)
            with sock:
                first = await sock.recv(64)
                assert first.startswith(b"HTTP/1.1 200 "), first
                stopped = trio.current_time()
                # The reader reads nothing more; the session goes on streaming to it.
                await client.call("events.subscribe", session=session)
                turns = 0
                while not _dropped(sock):
                    assert trio.current_time() - stopped < 6 * WRITE_TIMEOUT, "never dropped"
                    await client.call("prompt.submit", session=session, text=BIG_PROMPT)
                    await until(client, "turn.completed", session)  # this client is served
                    turns += 1
                took = trio.current_time() - stopped
                with contextlib.suppress(ConnectionResetError):  # the reset ends the stream
                    while await sock.recv(65536):
                        pass
            # The daemon goes on serving everyone else.
            status, body = await ahttp(daemon, "GET", "/health")
            assert status == 200 and body["result"]["pid"] == daemon.endpoint.pid
            other = await open_events(daemon, session)
            with other:
                assert (await other.recv(64)).startswith(b"HTTP/1.1 200 ")
    assert turns >= 1 and took >= WRITE_TIMEOUT * 0.9
    logged = [
        e
        for e in daemon.log_entries()
        if e["logger"] == "hermes.gateway.http" and e["msg"].endswith(": dropped")
    ]
    assert logged, "the daemon did not log the drop"
