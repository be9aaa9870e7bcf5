"""The gateway's restarts and stops as clients see them: the same port after a restart,
a last notice and a close frame with a reason when the daemon stops."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import trio
import trio_websocket

from hermes.gateway.client import Client, connect
from tests.hermes.daemon.daemon_proc import Daemon, running_daemon


async def until_closed(client: Client) -> list[dict[str, Any]]:
    """Every event up to the end of the connection."""
    return [event async for event in client.events]


async def endpoint_rewritten(daemon: Daemon, before: int) -> dict[str, Any]:
    """The endpoint file once a new gateway has written it."""
    path = daemon.paths.endpoint_file
    while True:
        try:
            if path.stat().st_mtime_ns != before:
                info: dict[str, Any] = json.loads(path.read_text())
                return info
        except (OSError, ValueError):
            pass  # being replaced
        await trio.sleep(0.05)


async def test_a_restarted_gateway_serves_the_same_url(tmp_path: Path) -> None:
    # Before: the new gateway bound port 0 again, so the saved URL pointed at nothing.
    with running_daemon(tmp_path) as daemon:
        endpoint = daemon.endpoint
        assert endpoint is not None
        before = daemon.paths.endpoint_file.stat().st_mtime_ns
        with trio.fail_after(120):
            async with connect(endpoint) as watcher, connect(endpoint) as killer:
                session = (await watcher.call("session.create"))["id"]
                # No answer: the asking connection goes down with the gateway.
                request = {"id": 1, "method": "actor.cancel", "params": {"path": "/hermes/gateway"}}
                await killer.send_raw(json.dumps(request))
                await until_closed(watcher)
            info = await endpoint_rewritten(daemon, before)
            assert info["port"] == endpoint.info["port"] and info["url"] == endpoint.url
            async with connect(endpoint) as again:  # the URL saved before the restart
                status = await again.call("daemon.status")
                got = await again.call("session.get", session=session)
            assert status["pid"] == daemon.proc.pid  # type: ignore[union-attr]
            assert got["id"] == session


async def test_sigterm_gives_websocket_clients_a_notice_and_a_close_frame(
    tmp_path: Path,
) -> None:
    # Before: the connections were cancelled with the gateway: no frame, code 1006.
    with running_daemon(tmp_path) as daemon:
        with trio.fail_after(120):
            async with connect(daemon.endpoint) as a, connect(daemon.endpoint) as b:  # type: ignore[arg-type]
                session = (await a.call("session.create"))["id"]
                await a.call("events.subscribe", session=session)
                await b.call("daemon.status")
                daemon.signal(signal.SIGTERM)
                seen = {"a": await until_closed(a), "b": await until_closed(b)}
                for name, client in (("a", a), ("b", b)):
                    closed = client.ws.closed
                    assert closed is not None
                    assert (closed.code, closed.reason) == (1001, "daemon stopping"), name
                    last = seen[name][-1]
                    assert last["type"] == "daemon.stopping", seen[name]
                    assert last["payload"] == {"reason": "daemon stopping"}
        code, _, err = await trio.to_thread.run_sync(daemon.wait)
        assert code == 0, err


async def test_a_client_that_reads_nothing_does_not_hold_up_the_stop(tmp_path: Path) -> None:
    """A stopping gateway does not wait on a client whose socket is full."""
    config = "[gateway]\nclient_buffer_bytes = 65536\n"
    with running_daemon(tmp_path, config) as daemon:
        assert daemon.endpoint is not None
        host, port = daemon.endpoint.info["host"], int(daemon.endpoint.info["port"])
        headers = [(b"authorization", f"Bearer {daemon.token}".encode())]
        request = json.dumps({"id": 1, "method": "tree.snapshot", "params": {}})
        with trio.fail_after(120):
            async with trio.open_nursery() as nursery:
                stream = await trio.open_tcp_stream(host, port)
                ws = await trio_websocket.wrap_client_stream(
                    nursery, stream, host, "/ws", extra_headers=headers, message_queue_size=1
                )
                with trio.move_on_after(5):  # until the daemon stops reading us
                    while True:
                        await ws.send_message(request)
                daemon.signal(signal.SIGTERM)
                code, _, err = await trio.to_thread.run_sync(daemon.wait)
                nursery.cancel_scope.cancel()
                await trio.aclose_forcefully(stream)
        assert code == 0, err
