"""The daemon's shutdown phases one by one, on the real tree in this process;
the report ``hermes daemon stop`` reads.

``build_root`` runs in an actor system of the test's own (real store file, the
demo model's HTTP server, the gateway on 127.0.0.1), and the test runs
``daemon_phases`` through ``run_phases`` a phase at a time, looking at what a
client sees between them. (SIGTERM through all of them, on a real process: see
``test_daemon.py``.)
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from trio.testing import MockClock

from actors import ActorRef, ActorSystem, open_system
from hermes.daemon.app import build_root
from hermes.daemon.config import prepare
from hermes.daemon.endpoint import Endpoint
from hermes.daemon.security import write_token
from hermes.daemon.settings import Settings
from hermes.daemon.shutdown import daemon_phases
from hermes.daemon.shutdown_report import stop_note, write_report
from hermes.daemon.startup import prepare_data_dir, prepare_runtime_dir
from hermes.gateway.client import GatewayError, connect
from hermes.gateway.server import GatewayActor
from hermes.paths import Paths
from supervisors import Phase, Step, StepStatus, run_phases
from tests.hermes.daemon.daemon_proc import LONG_PROMPT, daemon_env, write_config

BOUND = 120.0
"""Seconds for the whole test (imports are done; a busy machine is slow)."""


@asynccontextmanager
async def daemon_tree(root_dir: Path) -> AsyncIterator[tuple[ActorSystem, ActorRef, Endpoint]]:
    write_config(root_dir, "[model]\nfake_event_delay = 0.5\n")
    (root_dir / "home").mkdir(parents=True, exist_ok=True)
    config, paths = prepare(daemon_env(root_dir))
    prepare_runtime_dir(paths.runtime_dir)
    prepare_data_dir(paths.data_dir)
    token = write_token(paths.token_file)
    settings = Settings(config=config, paths=paths, boot_id="test", started_at=time.time())
    async with open_system("test", shutdown_timeout=30.0) as system:
        root = await system.spawn(
            build_root(settings, token, GatewayActor), name="hermes", shutdown=30.0
        )
        info = json.loads(paths.endpoint_file.read_text())
        yield system, root, Endpoint(info["url"], info["ws"], token, os.getpid(), info)


async def http_get(endpoint: Endpoint, path: str) -> tuple[int, dict[str, Any]]:
    """One request on a new connection: the status and the JSON body."""
    host, port = endpoint.info["host"], int(endpoint.info["port"])
    stream = await trio.open_tcp_stream(host, port)
    async with stream:
        head = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {endpoint.token}\r\n\r\n"
        )
        await stream.send_all(head.encode())
        data = b""
        while chunk := await stream.receive_some(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    body = rest.partition(b"\r\n\r\n")[2]
    return int(status_line.split()[1]), json.loads(body)


async def test_each_phase_does_its_part_as_a_client_sees_it(tmp_path: Path) -> None:
    with trio.fail_after(BOUND):
        async with daemon_tree(tmp_path) as (system, root, endpoint):
            async with connect(endpoint) as client:
                session: str = (await client.call("session.create"))["id"]
                await client.call("events.subscribe", session=session)
                await client.call("prompt.submit", session=session, text=LONG_PROMPT)
                async for event in client.events:
                    if event["type"] == "text.delta":
                        break
                phases = daemon_phases(system, root)
                names = [phase.name for phase in phases]
                assert names == ["stop-input", "cancel-turns", "flush-stores", "close-surfaces"]
                async with trio.open_nursery() as nursery:
                    stop_input = await run_phases(phases[:1], nursery)
                    assert stop_input.clean, stop_input.summary()

                    # No new request on an open connection, no new connection ...
                    with pytest.raises(GatewayError) as refused:
                        await client.call("session.create")
                    assert refused.value.code == "shutting_down"
                    assert "shutting down" in str(refused.value)
                    status, body = await http_get(endpoint, "/health")
                    assert status == 503 and body["error"]["code"] == "shutting_down"
                    # ... but the turn still streams to its subscriber.
                    async for event in client.events:
                        if event["type"] == "text.delta":
                            break

                    cancel = await run_phases(phases[1:2], nursery)
                    assert cancel.clean, cancel.summary()
                    async for event in client.events:
                        if event["type"] == "turn.completed":
                            break
                    assert event["payload"]["reason"] == "cancelled"
                    assert event["payload"]["detail"] == "the daemon is stopping"

                    rest = await run_phases(phases[2:], nursery)
                    assert [s.status for s in rest.steps] == [StepStatus.DONE] * 2, rest
                    after = [event async for event in client.events]  # up to the close
                    assert [event["type"] for event in after] == ["daemon.stopping"]
                    closed = client.ws.closed
                    assert closed is not None
                    assert (closed.code, closed.reason) == (1001, "daemon stopping")
                    with pytest.raises(OSError):  # the listener is closed
                        await http_get(endpoint, "/health")
            # The rest of the tree (stop-runtime) is open_system's to stop.
            assert root.is_alive


async def test_daemon_stop_adds_one_line_only_when_a_step_ran_over(
    tmp_path: Path, autojump_clock: MockClock
) -> None:
    paths = Paths(tmp_path / "config.toml", tmp_path / "data", tmp_path / "run")
    paths.runtime_dir.mkdir(mode=0o700)

    async def hangs() -> None:
        await trio.sleep_forever()

    async def quick() -> None:
        await trio.sleep(0.5)

    async with trio.open_nursery() as nursery:
        over = await run_phases(
            [
                Phase("cancel-turns", [Step("sessions", hangs)], timeout=20.0),
                Phase("flush-stores", [Step("store", quick)], timeout=10.0),
            ],
            nursery,
        )
        clean = await run_phases([Phase("flush-stores", [Step("store", quick)], 10.0)], nursery)
    write_report(paths, over)
    assert paths.shutdown_file.stat().st_mode & 0o777 == 0o600
    assert stop_note(paths, os.getpid()) == (
        "hermes daemon: shutdown in 20.50s: cancel-turns/sessions ran over after 20.00s: "
        "cancelled at its phase's 20s timeout"
    )
    assert stop_note(paths, os.getpid() + 1) is None  # another daemon's report
    write_report(paths, clean)
    assert stop_note(paths, os.getpid()) is None  # all in time: only "stopped (pid N)"
