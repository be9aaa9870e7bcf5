"""The gateway end to end: a real daemon subprocess, real WebSocket and HTTP clients."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import trio
import trio_websocket
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.gateway.client import Client, GatewayError, connect
from tests.hermes.daemon.daemon_proc import LONG_PROMPT, SLOW, Daemon, running_daemon


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("gw")
    config = SLOW + "[gateway]\nmax_frame_bytes = 16384\nmax_body_bytes = 2048\n"
    with running_daemon(root, config) as d:
        yield d


def http(
    daemon: Daemon,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = "ok",
    timeout: float = 10.0,
) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(daemon.url + path, data=data, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {daemon.token if token == 'ok' else token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:  # the error holds the response (and its socket) open
            return exc.code, json.loads(exc.read())


async def ahttp(daemon: Daemon, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    return await trio.to_thread.run_sync(lambda: http(daemon, method, path, body))


async def until(client: Client, kind: str, session: str | None = None) -> list[dict[str, Any]]:
    """Events up to and including the first of ``kind``."""
    seen = []
    async for event in client.events:
        seen.append(event)
        if event["type"] == kind and (session is None or event["session"] == session):
            return seen
    raise AssertionError(f"connection closed before {kind}")


async def new_session(client: Client) -> str:
    session: str = (await client.call("session.create"))["id"]
    return session


async def start_long_turn(client: Client, session: str, text: str = LONG_PROMPT) -> int:
    await client.call("events.subscribe", session=session)
    accepted = await client.call("prompt.submit", session=session, text=text)
    assert accepted["how"] == "started"
    await until(client, "text.delta", session)
    turn: int = accepted["turn"]
    return turn


# -- auth ----------------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["", "wrong-token"])
async def test_websocket_without_the_right_token_is_refused(daemon: Daemon, token: str) -> None:
    with trio.fail_after(10):
        with pytest.raises(trio_websocket.ConnectionRejected) as info:
            async with connect((daemon.ws, token)):
                pass
    assert info.value.status_code == 401
    body = json.loads(info.value.body or b"{}")
    assert body["error"]["code"] == "unauthorized"
    assert ("missing" if not token else "wrong") in body["error"]["message"]
    assert "session" not in json.dumps(body).replace("sessions", "")


async def test_http_without_the_right_token_is_refused(daemon: Daemon) -> None:
    with trio.fail_after(10):
        status, body = await trio.to_thread.run_sync(
            lambda: http(daemon, "GET", "/sessions", token=None)
        )
        assert status == 401 and body["error"]["code"] == "unauthorized"
        assert "result" not in body
        status, body = await trio.to_thread.run_sync(
            lambda: http(daemon, "GET", "/sessions", token="nope")
        )
        assert status == 401


# -- requests and errors -------------------------------------------------------------------


async def test_bad_input_gets_precise_errors_and_the_connection_stays_usable(
    daemon: Daemon,
) -> None:
    with trio.fail_after(15):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            await client.send_raw("{not json")
            await client.send_raw(json.dumps([1, 2]))
            await client.send_raw(b"\x81\x01")
            await client.send_raw("x" * 20000)  # over max_frame_bytes = 16384
            errors = []
            while len(errors) < 4:
                event = await client.events.receive()
                assert event["type"] == "stray"
                errors.append(event["payload"]["error"]["code"])
            assert errors == ["parse_error", "invalid_request", "parse_error", "frame_too_large"]
            with pytest.raises(GatewayError) as info:
                await client.call("no.such.method")
            assert info.value.code == "unknown_method"
            with pytest.raises(GatewayError) as info:
                await client.call("session.get", session=42)
            assert info.value.code == "invalid_params" and "'session'" in info.value.message
            with pytest.raises(GatewayError) as info:
                await client.call("session.get", session="no-such-session")
            assert info.value.code == "unknown_session"
            with pytest.raises(GatewayError) as info:
                await client.call("session.list", limit=10, colour="red")
            assert info.value.code == "invalid_params" and "colour" in info.value.message
            with pytest.raises(GatewayError) as info:
                await client.call("interrupt", session=await new_session(client))
            assert info.value.code == "no_turn"
            status = await client.call("daemon.status")
            assert status["demo"] is True and status["model"] == "hermes-demo"


async def test_msgpack_subprotocol(daemon: Daemon) -> None:
    with trio.fail_after(15):
        async with connect(daemon.endpoint, use_msgpack=True) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            await client.call("events.subscribe", session=session)
            await client.call("prompt.submit", session=session, text="hello")
            events = await until(client, "turn.completed", session)
            assert events[-1]["payload"]["reason"] == "completed"
            assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
            await client.send_raw("text frame on a msgpack connection")
            stray = await client.events.receive()
            assert stray["payload"]["error"]["code"] == "parse_error"


async def test_session_yolo_switch(daemon: Daemon) -> None:
    with trio.fail_after(15):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            assert await client.call("session.yolo", session=session) == {
                "session": session,
                "yolo": True,
            }
            off = await client.call("session.yolo", session=session, on=False)
            assert off["yolo"] is False
            with pytest.raises(GatewayError) as bad:
                await client.call("session.yolo", session=session, on="yes")
            assert bad.value.code == "invalid_params"


# -- several clients, replay ---------------------------------------------------------------


async def test_two_clients_get_the_same_events(daemon: Daemon) -> None:
    with trio.fail_after(20):
        async with connect(daemon.endpoint) as a, connect(daemon.endpoint) as b:  # type: ignore[arg-type]
            session = await new_session(a)
            await a.call("events.subscribe", session=session)
            await b.call("events.subscribe", session=session)
            await b.call("prompt.submit", session=session, text="list the files here")
            seen_a = await until(a, "turn.completed", session)
            seen_b = await until(b, "turn.completed", session)
    assert [(e["type"], e["seq"]) for e in seen_a] == [(e["type"], e["seq"]) for e in seen_b]
    kinds = [e["type"] for e in seen_a]
    assert "tool.started" in kinds and "tool.completed" in kinds
    started = next(e for e in seen_a if e["type"] == "tool.started")
    assert started["payload"]["name"] == "terminal" and started["payload"]["arguments"]
    assert all(e["path"].endswith(f"session-{session}") for e in seen_a)


async def test_reconnect_with_since_replays_what_was_missed(daemon: Daemon) -> None:
    with trio.fail_after(20):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            sub = await client.call("events.subscribe", session=session)
            epoch = sub["epoch"]
            await client.call("prompt.submit", session=session, text=LONG_PROMPT)
            first = await until(client, "text.delta", session)
            last_seen = first[-1]["seq"]
        # disconnected mid-turn; the turn goes on
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            for _ in range(200):  # wait for the turn to end (polling the daemon)
                if not (await client.call("session.get", session=session))["busy"]:
                    break
                await trio.sleep(0.05)
            sub = await client.call(
                "events.subscribe", session=session, since=last_seen, epoch=epoch
            )
            assert sub["replayed"] > 0 and sub["missed"] == 0 and not sub["epoch_changed"]
            replayed = [await client.events.receive() for _ in range(sub["replayed"])]
    seqs = [e["seq"] for e in replayed]
    assert seqs == list(range(last_seen + 1, last_seen + 1 + len(seqs)))
    assert replayed[-1]["type"] == "turn.completed"


# -- cancel from each surface --------------------------------------------------------------


async def test_cancel_over_websocket(daemon: Daemon) -> None:
    with trio.fail_after(20):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            turn = await start_long_turn(client, session)
            result = await client.call("cancel", session=session)
            assert result["cancelled"] and result["turn"] == turn
            assert result["reason"] == "cancelled"
            done = await until(client, "turn.completed", session)
            assert done[-1]["payload"]["reason"] == "cancelled"
            view = await client.call("session.get", session=session)
            assert view["busy"] is False and view["messages"] == 2


async def test_cancel_over_http(daemon: Daemon) -> None:
    with trio.fail_after(20):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            turn = await start_long_turn(client, session)
            status, body = await ahttp(daemon, "POST", f"/sessions/{session}/cancel", {})
            assert status == 200 and body["result"]["turn"] == turn
            done = await until(client, "turn.completed", session)
            assert done[-1]["payload"]["reason"] == "cancelled"


async def test_cancel_a_turn_by_actor_path(daemon: Daemon) -> None:
    with trio.fail_after(20):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session = await new_session(client)
            await start_long_turn(client, session)
            view = await client.call("session.get", session=session)
            path = view["turn_path"]
            assert path.startswith("/hermes/sessions/sup/session-") and "/turn-" in path
            result = await client.call("actor.cancel", path=path)
            assert result["path"] == path and result["reason"].startswith("cancelled")
            done = await until(client, "turn.completed", session)
            assert done[-1]["payload"]["reason"] in ("cancelled", "failed")
            assert (await client.call("session.get", session=session))["busy"] is False
            with pytest.raises(GatewayError) as info:
                await client.call("actor.cancel", path="/hermes")
            assert info.value.code == "invalid_params"
            with pytest.raises(GatewayError) as info:
                await client.call("actor.cancel", path="/hermes/nothing-here")
            assert info.value.code == "not_found"


# -- HTTP ----------------------------------------------------------------------------------


async def test_http_api(daemon: Daemon) -> None:
    with trio.fail_after(20):
        status, body = await ahttp(daemon, "GET", "/health")
        assert status == 200 and body["result"]["demo"] is True
        status, body = await ahttp(daemon, "POST", "/sessions", {"title": "over http"})
        assert status == 200
        session = body["result"]["id"]
        status, body = await ahttp(daemon, "POST", f"/sessions/{session}/prompt", {"text": "hi"})
        assert status == 200 and body["result"]["how"] == "started"
        for _ in range(200):
            status, body = await ahttp(daemon, "GET", f"/sessions/{session}")
            if not body["result"]["busy"] and body["result"]["messages"] == 2:
                break
            await trio.sleep(0.05)
        assert body["result"]["title"] == "over http"
        status, body = await ahttp(daemon, "GET", "/sessions")
        assert session in [row["id"] for row in body["result"]]
        status, body = await ahttp(daemon, "GET", "/tree")
        assert body["result"]["children"][0]["path"] == "/hermes"
        status, body = await ahttp(daemon, "POST", f"/sessions/{session}/interrupt", {})
        assert status == 409 and body["error"]["code"] == "no_turn"
        status, body = await ahttp(daemon, "POST", "/sessions/nope/prompt", {"text": "x"})
        assert status == 404 and body["error"]["code"] == "unknown_session"
        status, body = await ahttp(daemon, "POST", "/sessions", {"text": "x" * 3000})
        assert status == 413 and body["error"]["code"] == "body_too_large"
        status, body = await ahttp(daemon, "GET", "/nowhere")
        assert status == 404

        # server-sent events, replayed from the start
        def sse() -> list[str]:
            request = urllib.request.Request(daemon.url + f"/sessions/{session}/events?since=0")
            request.add_header("Authorization", f"Bearer {daemon.token}")
            lines: list[str] = []
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.headers["Content-Type"] == "text/event-stream"
                for raw in response:
                    line = raw.decode().rstrip("\n")
                    lines.append(line)
                    if line == "event: turn.completed":
                        return lines
            return lines

        lines = await trio.to_thread.run_sync(sse)
    assert "event: turn.started" in lines and lines[-1] == "event: turn.completed"
    assert "id: 1" in lines


# -- fuzz ----------------------------------------------------------------------------------

frames = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200),
    st.dictionaries(
        st.sampled_from(["id", "method", "params", "x"]),
        st.one_of(
            st.none(),
            st.integers(),
            st.text(max_size=20),
            st.booleans(),
            st.lists(st.integers(), max_size=3),
            st.dictionaries(st.text(max_size=8), st.integers(), max_size=3),
        ),
        max_size=4,
    ).map(json.dumps),
    st.builds(
        lambda m, p: json.dumps({"id": 1, "method": m, "params": p}),
        st.sampled_from(
            [
                "session.get",
                "session.create",
                "prompt.submit",
                "cancel",
                "steer",
                "events.subscribe",
                "actor.cancel",
                "search",
                "session.list",
            ]
        ),
        st.dictionaries(
            st.sampled_from(["session", "text", "since", "path", "query", "limit"]),
            st.one_of(st.none(), st.integers(), st.text(max_size=10), st.booleans()),
            max_size=3,
        ),
    ),
)


def test_fuzzed_frames_never_take_the_daemon_down(daemon: Daemon) -> None:
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(frames, min_size=1, max_size=8))
    def run(batch: list[str | bytes]) -> None:
        async def go() -> None:
            with trio.fail_after(10):
                async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
                    for frame in batch:
                        await client.send_raw(frame)
                    status = await client.call("daemon.status")
                    assert status["pid"] == daemon.endpoint.pid  # type: ignore[union-attr]

        trio.run(go)

    run()
    with trio_websocket_client(daemon) as status:
        assert status["demo"] is True


class trio_websocket_client:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    def __enter__(self) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            async with connect(self.daemon.endpoint) as client:  # type: ignore[arg-type]
                result: dict[str, Any] = await client.call("daemon.status")
                return result

        return trio.run(go)

    def __exit__(self, *exc: object) -> None:
        pass
