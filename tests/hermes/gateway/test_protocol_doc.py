"""The daemon does what docs/protocol.md says: the 16 KiB head limit, the memory errors'
HTTP statuses, the fields of ``session.get`` (a real daemon, real sockets)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.gateway.client import connect
from hermes.gateway.http_api import http_status
from hermes.gateway.wire_http import MAX_HEAD
from hermes.memory import MemoryStore, MemoryStoreError
from hermes.memory.files import locked
from tests.hermes.daemon.daemon_proc import Daemon, running_daemon
from tests.hermes.gateway.test_gateway import ahttp

DOC = Path(__file__).parents[3] / "docs" / "protocol.md"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("limits"), "[review]\nenabled = false\n") as d:
        yield d


def head_of(daemon: Daemon, size: int) -> bytes:
    """A ``GET /health`` head of exactly ``size`` bytes (blank line included)."""
    assert daemon.endpoint is not None
    host, port = daemon.endpoint.info["host"], daemon.endpoint.info["port"]
    start = (
        f"GET /health HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {daemon.token}\r\n"
    )
    pad = size - len(start) - len("X-Pad: \r\n\r\n")
    head = f"{start}X-Pad: {'p' * pad}\r\n\r\n".encode()
    assert len(head) == size
    return head


async def exchange(daemon: Daemon, data: bytes) -> tuple[int, dict[str, Any]]:
    assert daemon.endpoint is not None
    stream = await trio.open_tcp_stream(daemon.endpoint.info["host"], daemon.endpoint.info["port"])
    async with stream:
        await stream.send_all(data)
        answer = b""
        while chunk := await stream.receive_some(65536):
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.split(b"\r\n\r\n", 1)[1])


async def test_a_head_over_16_kib_gets_431(daemon: Daemon) -> None:
    assert MAX_HEAD == 16 * 1024
    with trio.fail_after(60):
        status, body = await exchange(daemon, head_of(daemon, MAX_HEAD))
        assert status == 200 and "result" in body  # exactly at the limit: served
        for size in (MAX_HEAD + 1, 17 * 1000, 17 * 1024, 64 * 1024):
            status, body = await exchange(daemon, head_of(daemon, size))
            assert status == 431, (size, body)
            assert body["error"]["code"] == "head_too_large"
            assert "16384 bytes" in body["error"]["message"]


def test_every_memory_error_has_its_own_http_status() -> None:
    reasons = {MemoryStoreError.reason}
    todo = [MemoryStoreError]
    while todo:
        for sub in todo.pop().__subclasses__():
            reasons.add(sub.reason)
            todo.append(sub)
    statuses = {reason: http_status(reason) for reason in reasons}
    assert statuses["proposal_not_found"] == 404
    assert statuses["invalid_entry"] == 400
    for conflict in ("stale_proposal", "memory_full", "no_match", "duplicate_entry"):
        assert statuses[conflict] == 409
    assert statuses["locked"] == 503
    # Only a store the daemon cannot read (or an error of no kind) is the server's fault.
    assert {r for r, s in statuses.items() if s == 500} == {"unreadable", "memory_error"}


async def test_memory_refusals_get_their_statuses_over_http(daemon: Daemon) -> None:
    memory = MemoryStore(daemon.paths.data_dir / "memories", lock_timeout=10.0)
    memory.add("memory", "The build runs with `make ci`.")
    proposal = memory.propose("replace", "memory", "make ci", "The build runs with `make all`.")
    with trio.fail_after(60):
        status, body = await ahttp(daemon, "POST", "/memory/pending/nope/approve", {})
        assert (status, body["error"]["code"]) == (404, "proposal_not_found")

        with locked(memory.lock_path, 10.0):  # another process holds the memory lock
            status, body = await ahttp(daemon, "POST", f"/memory/pending/{proposal.id}/approve")
        assert (status, body["error"]["code"]) == (503, "locked")

        memory.replace("memory", "make ci", "The build runs with `tox`.")  # it no longer applies
        status, body = await ahttp(daemon, "POST", f"/memory/pending/{proposal.id}/approve")
        assert (status, body["error"]["code"]) == (409, "stale_proposal")
        assert [p.id for p in memory.proposals()] == [proposal.id]  # it stays pending

        memory.path("user").write_bytes(b"\xff\xfe not text")
        status, body = await ahttp(daemon, "GET", "/memory")
        assert (status, body["error"]["code"]) == (500, "unreadable")
        assert "cannot be read" in body["error"]["message"]


async def test_session_get_returns_the_documented_fields(daemon: Daemon) -> None:
    row = next(line for line in DOC.read_text().splitlines() if line.startswith("| `session.get`"))
    result = row.split("|")[3]
    documented = set(re.findall(r"(?:^|[:,] )([a-z_]+)", re.sub(r"\([^)]*\)", "", result)))
    assert daemon.endpoint is not None
    with trio.fail_after(60):
        async with connect(daemon.endpoint) as client:
            session = (await client.call("session.create", title="doc"))["id"]
            view = await client.call("session.get", session=session)
            status, body = await ahttp(daemon, "GET", f"/sessions/{session}")
    assert status == 200 and body["result"].keys() == view.keys()
    assert view["id"] == session and view["title"] == "doc"
    assert set(view) == documented
