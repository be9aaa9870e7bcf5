"""Subagent and process methods, approvals to several clients, slow clients, ps/approve/tree.

One real daemon subprocess talks to a scripted fake provider (served from a
thread of this process): the scripts make the tool calls the demo model never
makes (a background process, a dangerous command, a flood of deltas).
"""

from __future__ import annotations

import json
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import trio
import trio_websocket

from hermes.fake import FakeProvider, Reply, Text, ToolUse
from hermes.gateway.client import Client, GatewayError, connect
from tests.hermes.daemon.daemon_proc import (
    CLI_BOUND,
    EXIT_BOUND,
    LONG_PROMPT,
    Daemon,
    running_daemon,
)
from tests.hermes.gateway.fake_thread import ThreadedFake
from tests.hermes.gateway.test_gateway import ahttp, new_session, until

SLEEPER = "start a background sleeper"
DANGER = "delete the scratch dir"
FLOOD = "flood me with text"
FLOOD_DELTAS = 1500


def _flood_deltas() -> tuple[str, ...]:
    """``FLOOD_DELTAS`` deltas of 200 characters of seeded random words: text that never
    repeats (the runaway-repetition guard would cut a reply of one character over and
    over) and that compresses as prose does on the wire."""
    rng = random.Random(7)
    words = ("the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "with", "on")
    text = " ".join(rng.choice(words) for _ in range(FLOOD_DELTAS * 60))
    return tuple(text[i * 200 : (i + 1) * 200] for i in range(FLOOD_DELTAS))


def _provider() -> FakeProvider:
    fake = FakeProvider(demo_event_delay=0.03)
    fake.when(
        Reply.of("Starting.", ToolUse("terminal", {"command": "sleep 120", "background": True})),
        last_user_text=SLEEPER,
    )
    fake.when(
        Reply.of("Deleting.", ToolUse("terminal", {"command": "rm -r ./no-such-scratch-dir"})),
        last_user_text=DANGER,
    )
    fake.when(Reply.of(Text(deltas=_flood_deltas())), last_user_text=FLOOD)
    return fake


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("surfaces")
    with ThreadedFake(_provider()) as fake:
        config = f'[model]\nbase_url = "{fake.base_url}"\n[gateway]\nclient_queue = 64\n'
        with running_daemon(root, config, ANTHROPIC_API_KEY="test-key", NO_PROXY="*") as d:
            yield d


def ep(daemon: Daemon) -> Any:
    return daemon.endpoint


async def acli(daemon: Daemon, *args: str) -> subprocess.CompletedProcess[str]:
    return await trio.to_thread.run_sync(lambda: daemon.cli(*args))


# -- subagents -----------------------------------------------------------------------------


async def test_subagent_list_steer_stop_over_websocket_and_http(daemon: Daemon) -> None:
    with trio.fail_after(CLI_BOUND):
        async with connect(ep(daemon)) as client:
            session = await new_session(client)
            await client.call("events.subscribe", session=session)
            story = LONG_PROMPT.replace("please tell me", "tell me")
            prompt = f"do these in parallel: {story}; {story.replace('word', 'term')}"
            await client.call("prompt.submit", session=session, text=prompt)
            rows: list[dict[str, Any]] = []
            for _ in range(200):
                rows = await client.call("subagent.list", session=session)
                if len(rows) == 2 and all(r["state"] == "running" for r in rows):
                    break
                await trio.sleep(0.05)
            assert [r["state"] for r in rows] == ["running", "running"], rows
            first, second = (r["subagent_id"] for r in rows)
            steered = await client.call(
                "subagent.steer", session=session, subagent=first, text="be brief"
            )
            assert steered["subagent"] == first and steered["how"] in ("steered", "started")
            status, body = await ahttp(
                daemon, "POST", f"/sessions/{session}/subagents/{second}/stop", {}
            )
            assert status == 200, body
            assert body["result"]["subagent"] == second
            assert body["result"]["result"]["status"] == "interrupted"
            status, body = await ahttp(daemon, "GET", f"/sessions/{session}/subagents")
            states = {r["subagent_id"]: r["state"] for r in body["result"]}
            assert states[second] == "interrupted"
            with pytest.raises(GatewayError) as info:
                await client.call("subagent.stop", session=session, subagent="sa-nope")
            assert info.value.code == "unknown_subagent" and "sa-nope" in info.value.message
            status, body = await ahttp(
                daemon, "POST", f"/sessions/{session}/subagents/sa-nope/steer", {"text": "x"}
            )
            assert status == 404 and body["error"]["code"] == "unknown_subagent"
            await client.call("cancel", session=session)
            with pytest.raises(GatewayError) as info:
                await client.call("subagent.list", session="no-such-session")
            assert info.value.code == "unknown_session"


# -- background processes ------------------------------------------------------------------


async def _sleeper(client: Client) -> tuple[str, str]:
    session = await new_session(client)
    await client.call("events.subscribe", session=session)
    await client.call("prompt.submit", session=session, text=SLEEPER)
    done = await until(client, "turn.completed", session)
    assert done[-1]["payload"]["reason"] == "completed"
    rows = await client.call("process.list", session=session)
    assert len(rows) == 1 and rows[0]["status"] == "running", rows
    assert rows[0]["command"] == "sleep 120" and rows[0]["session"] == session
    return session, rows[0]["id"]


async def test_process_list_and_kill_over_websocket_http_and_cli(daemon: Daemon) -> None:
    with trio.fail_after(CLI_BOUND):
        async with connect(ep(daemon)) as client:
            one, p1 = await _sleeper(client)
            two, p2 = await _sleeper(client)
            every = await client.call("process.list")
            assert {(r["session"], r["id"]) for r in every} >= {(one, p1), (two, p2)}
            status, body = await ahttp(daemon, "GET", "/processes")
            assert status == 200 and {r["id"] for r in body["result"]} >= {p1, p2}
            status, body = await ahttp(daemon, "GET", f"/sessions/{two}/processes")
            assert [r["id"] for r in body["result"]] == [p2]

            ps = await acli(daemon, "ps", "--json")
            assert ps.returncode == 0, ps.stderr
            assert {r["id"] for r in json.loads(ps.stdout)} >= {p1, p2}
            ps = await acli(daemon, "ps", "--session", one)
            assert ps.returncode == 0 and p1 in ps.stdout and p2 not in ps.stdout
            assert "running" in ps.stdout and "sleep 120" in ps.stdout

            killed = await client.call("process.kill", session=one, process=p1)
            assert killed["id"] == p1 and killed["status"] == "killed"
            status, body = await ahttp(daemon, "POST", f"/sessions/{two}/processes/{p2}/kill", {})
            assert status == 200 and body["result"]["status"] == "killed"
            rows = await client.call("process.list", session=one)
            assert rows[0]["status"] == "killed"
            with pytest.raises(GatewayError) as info:
                await client.call("process.kill", session=one, process="proc_nope")
            assert info.value.code == "unknown_process"
            ps = await acli(daemon, "ps", "--session", "no-such-session")
            assert ps.returncode == 1 and "unknown_session" in ps.stderr


# -- approvals to several clients ----------------------------------------------------------


async def _approval(clients: list[Client], session: str) -> int:
    await clients[0].call("prompt.submit", session=session, text=DANGER)
    ids = set()
    for client in clients:
        seen = await until(client, "approval.requested", session)
        ids.add(seen[-1]["payload"]["request_id"])
    assert len(ids) == 1
    return ids.pop()


async def test_approvals_go_to_every_client_and_the_first_answer_wins(daemon: Daemon) -> None:
    with trio.fail_after(CLI_BOUND):
        async with connect(ep(daemon)) as a, connect(ep(daemon)) as b:
            session = await new_session(a)
            for client in (a, b):
                await client.call("events.subscribe", session=session, approvals=True)
            # both answer at once: exactly one wins, the other is told who did
            request_id = await _approval([a, b], session)
            outcomes: dict[str, Any] = {}

            async def answer(name: str, client: Client, choice: str) -> None:
                try:
                    outcomes[name] = await client.call(
                        "approval.respond", session=session, request_id=request_id, choice=choice
                    )
                except GatewayError as exc:
                    outcomes[name] = exc

            async with trio.open_nursery() as nursery:
                nursery.start_soon(answer, "a", a, "deny")
                nursery.start_soon(answer, "b", b, "once")
            errors = [o for o in outcomes.values() if isinstance(o, GatewayError)]
            wins = [o for o in outcomes.values() if not isinstance(o, GatewayError)]
            assert len(errors) == 1 and len(wins) == 1, outcomes
            assert errors[0].code == "already_answered"
            assert f"({wins[0]['choice']}): the first answer wins" in errors[0].message
            for client in (a, b):
                resolved = await until(client, "approval.resolved", session)
                assert resolved[-1]["payload"]["choice"] == wins[0]["choice"]
                await until(client, "turn.completed", session)

            # the CLI answers first; the WebSocket client and a second CLI call are refused
            request_id = await _approval([a, b], session)
            done = await acli(daemon, "approve", str(request_id), "deny", "--session", session)
            assert done.returncode == 0, done.stderr
            assert f"approval {request_id} of {session}: deny" in done.stdout
            with pytest.raises(GatewayError) as info:
                await b.call(
                    "approval.respond", session=session, request_id=request_id, choice="once"
                )
            assert info.value.code == "already_answered" and "(deny)" in info.value.message
            again = await acli(daemon, "approve", str(request_id), "once", "--session", session)
            assert again.returncode == 1 and "already_answered" in again.stderr
            status, body = await ahttp(
                daemon, "POST", f"/sessions/{session}/approvals/{request_id}", {"choice": "once"}
            )
            assert status == 409 and body["error"]["code"] == "already_answered"
            completed = await until(a, "turn.completed", session)
            tools = [e for e in completed if e["type"] == "tool.completed"]
            assert tools and tools[-1]["payload"]["is_error"]  # denied: not run
            bad = await acli(daemon, "approve", "1", "maybe", "--session", session)
            assert bad.returncode == 2 and "maybe" in bad.stderr


# -- a slow client -------------------------------------------------------------------------


async def _raw_ws(daemon: Daemon, nursery: trio.Nursery) -> trio_websocket.WebSocketConnection:
    """A WebSocket on a socket with a tiny receive buffer: it stalls as soon as we stop reading."""
    assert daemon.endpoint is not None
    port = int(daemon.endpoint.info["port"])
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    await sock.connect(("127.0.0.1", port))
    stream = trio.SocketStream(sock)
    return await trio_websocket.wrap_client_stream(
        nursery,
        stream,
        "127.0.0.1",
        f"/ws?token={daemon.token}",
        subprotocols=["hermes.json"],
        message_queue_size=1,
        max_message_size=16 << 20,
    )


async def test_a_slow_client_gets_events_dropped_and_never_slows_the_session(
    daemon: Daemon,
) -> None:
    with trio.fail_after(CLI_BOUND):
        async with connect(ep(daemon)) as fast, trio.open_nursery() as nursery:
            session = await new_session(fast)
            await fast.call("events.subscribe", session=session)
            slow = await _raw_ws(daemon, nursery)
            await slow.send_message(
                json.dumps({"id": 1, "method": "events.subscribe", "params": {"session": session}})
            )
            assert json.loads(await slow.get_message())["id"] == 1
            started = time.monotonic()
            await fast.call("prompt.submit", session=session, text=FLOOD)
            done = await until(fast, "turn.completed", session)
            took = time.monotonic() - started
            assert done[-1]["payload"]["reason"] == "completed"
            deltas = sum(1 for e in done if e["type"] == "text.delta")
            assert 0 < deltas <= FLOOD_DELTAS
            # the slow client read nothing meanwhile; now it drains what it was given, up to
            # the turn's last event or the notice that it lost it (a notice has the lost seq)
            last = done[-1]["seq"]
            frames: list[dict[str, Any]] = []
            while not frames or (frames[-1].get("seq") or 0) < last:
                frames.append(json.loads(await slow.get_message()))
            # it resubscribes from the last seq before its first loss: nothing is missing
            first_drop = next(i for i, f in enumerate(frames) if f["type"] == "events.dropped")
            since = max([0, *(f["seq"] for f in frames[:first_drop] if f.get("seq"))])
            request = {"session": session, "since": since}
            await slow.send_message(
                json.dumps({"id": 2, "method": "events.subscribe", "params": request})
            )
            answer = json.loads(await slow.get_message())
            while answer.get("id") != 2:  # events of the old subscription still in flight
                answer = json.loads(await slow.get_message())
            result = answer["result"]
            assert result["missed"] == 0 and result["replayed"] == result["seq"] - since
            replayed = [json.loads(await slow.get_message()) for _ in range(result["replayed"])]
            assert [f["seq"] for f in replayed] == list(range(since + 1, result["seq"] + 1))
            await slow.aclose()
            nursery.cancel_scope.cancel()
    dropped = [f for f in frames if f["type"] == "events.dropped"]
    assert dropped and all(f["payload"]["count"] > 0 for f in dropped)
    seqs = [f["seq"] for f in frames if f["type"] != "events.dropped"]
    assert seqs == sorted(seqs)
    lost = sum(f["payload"]["count"] for f in dropped)
    assert lost > 0
    print(f"flood took {took:.2f}s; slow client lost {lost} events in {len(dropped)} notices")


# -- hermes tree --watch -------------------------------------------------------------------


def test_tree_watch_redraws_until_ctrl_c(daemon: Daemon) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes", "tree", "--watch", "--interval", "0.2"],
        env=daemon.env,
        cwd=daemon.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        frames, manager = 0, []
        deadline = time.monotonic() + EXIT_BOUND  # the CLI's own imports come first
        while frames < 3 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            frames += line.startswith("hermes tree ")
            if "sessions  [SessionsManager]" in line:
                manager.append(line)
        assert frames == 3 and len(manager) >= 2
        assert all("mailbox 0" in m and "beat " in m and "restarts 0" in m for m in manager)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=EXIT_BOUND)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=EXIT_BOUND)
