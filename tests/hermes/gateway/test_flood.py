"""One client cannot exhaust the daemon: a flood of requests from a client that reads
slowly (or not at all) is held to its connection's bounds, and a client that takes no
frame within ``gateway.write_timeout`` is dropped."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import trio
import trio_websocket

from bench.gateway_abuse import Throttled, rss_bytes
from hermes.gateway.client import Client, connect
from tests.hermes.daemon.daemon_proc import Daemon, running_daemon


async def open_raw(
    daemon: Daemon, nursery: trio.Nursery, read_rate: int | None
) -> tuple[trio_websocket.WebSocketConnection, trio.SocketStream]:
    """A WebSocket that reads ``read_rate`` bytes/s (None: reads nothing once 1 frame waits)."""
    assert daemon.endpoint is not None
    host, port = daemon.endpoint.info["host"], int(daemon.endpoint.info["port"])
    tcp = await trio.open_tcp_stream(host, port)
    stream = Throttled(tcp, read_rate) if read_rate else tcp
    ws = await trio_websocket.wrap_client_stream(
        nursery,
        stream,  # type: ignore[arg-type]
        host,
        "/ws",
        extra_headers=[(b"authorization", f"Bearer {daemon.token}".encode())],
        message_queue_size=1,
    )
    return ws, tcp


async def flood(
    ws: trio_websocket.WebSocketConnection,
    seconds: float,
    method: str = "daemon.status",
    bad: str | None = None,
) -> int:
    """Send requests (every fourth ``bad`` instead, if given) without waiting for answers,
    for ``seconds`` (a duration, not a wait for anything); returns how many went out."""
    request = json.dumps({"id": 1, "method": method, "params": {}})
    sent = 0
    with trio.move_on_after(seconds), contextlib.suppress(trio_websocket.ConnectionClosed):
        while True:
            await ws.send_message(bad if bad is not None and sent % 4 == 0 else request)
            sent += 1
    return sent


async def stats(client: Client) -> dict[str, Any]:
    result: dict[str, Any] = await client.call("daemon.stats", timeout=60)
    return result


async def connections(client: Client) -> int:
    tree = await client.call("tree.snapshot", timeout=60)
    stack = list(tree["children"])
    while stack:
        node = stack.pop()
        if node["path"] == "/hermes/gateway":
            return sum(
                1 for c in node["children"] if c["path"].rsplit("/", 1)[1].startswith("conn-")
            )
        stack.extend(node["children"])
    raise AssertionError("no gateway in the tree")


async def until_connections(client: Client, most: int) -> None:
    """Until the gateway holds at most ``most`` connections (polled over ``client``)."""
    while True:
        if await connections(client) <= most:
            return
        await trio.sleep(0.1)


async def test_a_flood_from_a_slow_reader_stays_within_its_bounds(tmp_path: Path) -> None:
    # Before: every request read became a task waiting to queue its answer; the daemon
    # grew by thousands of tasks and hundreds of MB in seconds.
    with running_daemon(tmp_path) as daemon:
        pid = daemon.proc.pid  # type: ignore[union-attr]
        with trio.fail_after(180):
            async with connect(daemon.endpoint) as probe:  # type: ignore[arg-type]
                before = await stats(probe)
                start_rss = rss_bytes(pid)
                async with trio.open_nursery() as nursery:
                    ws, tcp = await open_raw(daemon, nursery, read_rate=64 * 1024)

                    async def drain() -> None:
                        while True:
                            await ws.get_message()

                    nursery.start_soon(drain)
                    sent = await flood(ws, 8.0)
                    during = await stats(probe)
                    peak_rss = rss_bytes(pid)
                    nursery.cancel_scope.cancel()
                    await trio.aclose_forcefully(tcp)
                assert sent > 1000  # it did flood
                assert during["trio_tasks"] - before["trio_tasks"] < 300, (before, during)
                assert peak_rss - start_rss < 50 << 20
                # Once it left, the daemon answers at once and holds nothing for it.
                await until_connections(probe, 1)
                after = await stats(probe)
                assert after["trio_tasks"] - before["trio_tasks"] < 20, (before, after)


async def test_a_client_that_takes_no_frame_is_dropped(tmp_path: Path) -> None:
    # Before: the writer gave up on it but the connection stayed, its reader and
    # handlers waiting for ever on a queue nobody emptied.
    config = "[gateway]\nwrite_timeout = 2.0\nclient_buffer_bytes = 65536\n"
    with running_daemon(tmp_path, config) as daemon:
        with trio.fail_after(180):
            async with connect(daemon.endpoint) as probe:  # type: ignore[arg-type]
                async with trio.open_nursery() as nursery:
                    ws, tcp = await open_raw(daemon, nursery, read_rate=None)
                    # It reads nothing: its socket fills, the daemon stops reading it,
                    # then drops it (the flood may see that already).
                    sent = await flood(ws, 5.0, "tree.snapshot", bad="{not json")
                    await until_connections(probe, 1)  # our socket stays open meanwhile
                    assert sent > 100
                    nursery.cancel_scope.cancel()
                    await trio.aclose_forcefully(tcp)
                status = await probe.call("daemon.status")
                assert status["pid"] == daemon.proc.pid  # type: ignore[union-attr]
                log = daemon.paths.log_file.read_text()
                assert "took no byte in 2 s; disconnecting" in log
