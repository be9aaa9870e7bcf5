"""Hostile params against a real daemon: each bad request is that request's error.

A bad ``session.create`` once crashed the sessions manager (every client
dropped, the core restarted, six in a row ended the daemon); a lone surrogate in
a prompt dropped every subscriber. Here every such request gets a precise
answer, and the daemon's actors are the same incarnations afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.fake import FakeProvider, Reply, Text
from hermes.gateway.client import Client, GatewayError, connect
from tests.hermes.daemon.daemon_proc import LONG_PROMPT, SLOW, Daemon, running_daemon
from tests.hermes.gateway.fake_thread import ThreadedFake
from tests.hermes.gateway.test_gateway import ahttp, new_session, until

MAX_FRAME = 16 << 20
"""The daemon's frame limit here: big enough for the 1 MB strings the fuzz sends."""


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("hostile")
    (root / "work").mkdir()
    (root / "work" / "file.txt").write_text("not a directory\n")
    with running_daemon(root, SLOW + f"[gateway]\nmax_frame_bytes = {MAX_FRAME}\n") as d:
        yield d


def incarnations(tree: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """``path -> (id, restarts)`` of every actor but connections (they come and go)."""
    out: dict[str, tuple[str, int]] = {}
    stack = list(tree["children"])
    while stack:
        node = stack.pop()
        if "/conn-" not in node["path"]:
            out[node["path"]] = (node["id"], node["restarts"])
        stack.extend(node["children"])
    return out


def assert_nothing_restarted(before: dict[str, tuple[str, int]], tree: dict[str, Any]) -> None:
    after = incarnations(tree)
    restarted = {path: seen for path, seen in after.items() if seen[1]}
    assert not restarted, f"restarted: {restarted}"
    replaced = {p: (before[p], after.get(p)) for p in before if after.get(p) != before[p]}
    # Sessions may end (a fuzzed close); the core may not be replaced.
    core = {p: v for p, v in replaced.items() if "/session-" not in p}
    assert not core, f"replaced: {core}"


async def raw_call(client: Client, frame: str) -> dict[str, Any]:
    """Send one raw text frame; the answer with its id, or the stray (id-less) one."""
    request_id = json.loads(frame).get("id")
    send, receive = trio.open_memory_channel[dict[str, Any]](1)
    client._pending[request_id] = send
    try:
        await client.send_raw(frame)
        with trio.fail_after(60):
            if request_id is None or (isinstance(request_id, str) and "\ud800" in request_id):
                async for event in client.events:  # session events may come first
                    if event["type"] == "stray":
                        answer: dict[str, Any] = event["payload"]
                        return answer
                raise AssertionError("the connection closed without an answer")
            return await receive.receive()
    finally:
        client._pending.pop(request_id, None)


BAD_CREATES = [
    ({"cwd": "/tmp/a\x00b"}, "'cwd' holds the control character U+0000"),
    ({"cwd": "~nosuchuser-hermes"}, "there is no such user"),
    ({"cwd": "~nosuchuser-hermes/sub"}, "there is no such user"),
    ({"cwd": "relative/dir"}, "is relative"),
    ({"cwd": "/no/such/directory"}, "does not exist"),
    ({"cwd": "/" + "d" * 5000}, "over the limit of 4096"),
    ({"cwd": "/" + "/".join(["d" * 255] * 15)}, "does not exist"),
    ({"cwd": "/" + "d" * 300}, "cannot be checked"),
    ({"title": "t" * 100_000}, "'title' is 100000 characters, over the limit of 200"),
    ({"title": "line\nbreak"}, "'title' holds the control character U+000A"),
    ({"title": 7}, "'title' must be a string"),
    ({"busy_mode": "sideways"}, "'busy_mode' must be one of"),
]


async def test_bad_session_create_params_are_refused_and_nothing_restarts(
    daemon: Daemon,
) -> None:
    with trio.fail_after(120):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            before = incarnations(await client.call("tree.snapshot"))
            busy = await new_session(client)
            await client.call("events.subscribe", session=busy)
            await client.call("prompt.submit", session=busy, text=LONG_PROMPT)
            sessions = len(await client.call("session.list", limit=1000))
            for params, message in BAD_CREATES * 2:  # twice: once crashed, six ended it
                with pytest.raises(GatewayError) as info:
                    await client.call("session.create", **params)
                assert info.value.code == "invalid_params", info.value
                assert message in info.value.message, info.value.message
            (file,) = [str(daemon.root / "work" / "file.txt")]
            with pytest.raises(GatewayError) as info:
                await client.call("session.create", cwd=file)
            assert "is not a directory" in info.value.message
            await until(client, "turn.completed", busy)  # the running turn lived on
            made = await client.call("session.create", cwd=str(daemon.root / "work"))
            assert made["running"] is True
            assert len(await client.call("session.list", limit=1000)) == sessions + 1
            assert_nothing_restarted(before, await client.call("tree.snapshot"))
    assert daemon.proc is not None and daemon.proc.poll() is None


async def test_a_lone_surrogate_is_refused_and_no_subscriber_drops(daemon: Daemon) -> None:
    with trio.fail_after(120):
        async with (
            connect(daemon.endpoint) as sender,  # type: ignore[arg-type]
            connect(daemon.endpoint) as watcher,  # type: ignore[arg-type]
        ):
            session = await new_session(sender)
            await watcher.call("events.subscribe", session=session)
            bad_prompt = (
                json.dumps({"id": "p1", "method": "prompt.submit", "params": {"session": session}})[
                    :-2
                ]
                + ', "text": "hi \\ud800 there"}}'
            )
            answer = await raw_call(sender, bad_prompt)
            assert answer["id"] == "p1" and answer["error"]["code"] == "invalid_params"
            assert (
                "params.text holds a lone surrogate U+D800 at offset 3"
                in (answer["error"]["message"])
            )
            bad_id = '{"id": "x\\ud800", "method": "daemon.status"}'
            answer = await raw_call(sender, bad_id)
            assert answer["id"] is None and answer["error"]["code"] == "invalid_request"
            assert "id holds a lone surrogate" in answer["error"]["message"]
            bad_key = '{"id": 9, "method": "session.list", "params": {"\\udfff": 1}}'
            answer = await raw_call(sender, bad_key)
            assert answer["id"] == 9 and "a key of params" in answer["error"]["message"]
            # both connections still serve, the turn runs, and replay reads back cleanly
            await sender.call("prompt.submit", session=session, text="hello after")
            await until(watcher, "turn.completed", session)
            assert (await sender.call("daemon.status"))["demo"] is True
        async with connect(daemon.endpoint) as again:  # type: ignore[arg-type]
            replay = await again.call("events.subscribe", session=session, since=0)
            assert replay["replayed"] > 0
            assert (await again.call("daemon.status"))["demo"] is True


# -- the fuzz: generated params to every method -----------------------------------------------

HOSTILE_STRINGS = [
    "", "\x00", "/tmp/a\x00b", "\ud800", "x\udfffy", "~nosuchuser", "~nosuchuser/d", "../..",
    "/", "relative", "%s%n", "\n", "\x1b[2J", "x" * (1 << 20), "\x00" * 100_000,
    "é" * 100_000, "\ud800" * 100_000, "/" + "d" * 5000,
]  # fmt: skip
"""Strings that once crashed something, or could: NUL, lone surrogates, 1 MB, odd paths."""
HOSTILE_TEXT = st.one_of(st.sampled_from(HOSTILE_STRINGS), st.text(max_size=20))
VALUES = st.one_of(
    HOSTILE_TEXT,
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


METHOD_PARAMS: dict[str, tuple[str, ...]] = {
    "daemon.status": (), "daemon.stats": ("collect",), "daemon.heap": ("limit",),
    "session.create": ("title", "cwd", "busy_mode"),
    "session.list": ("limit", "include_ended"), "session.get": ("session",),
    "session.resume": ("session",), "session.close": ("session", "reason"),
    "prompt.submit": ("session", "text", "mode"), "steer": ("session", "text"),
    "redirect": ("session", "text"), "interrupt": ("session", "reason"),
    "cancel": ("session", "reason"), "actor.cancel": ("path",), "tree.snapshot": (),
    "approval.respond": ("session", "request_id", "choice", "content"),
    "search": ("query", "limit", "session"), "session.compress": ("session", "focus"),
    "memory.show": (), "memory.pending": (), "memory.approve": ("proposal",),
    "memory.reject": ("proposal",), "session.yolo": ("session", "on"),
    "orphans.list": (), "subagent.list": ("session",),
    "subagent.steer": ("session", "subagent", "text"),
    "subagent.stop": ("session", "subagent", "reason"), "process.list": ("session",),
    "process.kill": ("session", "process"), "mcp.list": (), "mcp.test": ("name",),
    "mcp.enable": ("name",), "mcp.disable": ("name",),
    "mcp.session_enable": ("session", "name"), "mcp.session_disable": ("session", "name"),
    "cron.add": (
        "schedule", "prompt", "name", "tz", "cwd", "model", "toolsets", "overlap", "timeout",
        "paused",
    ),
    "cron.edit": (
        "job", "schedule", "prompt", "name", "tz", "cwd", "model", "toolsets", "overlap",
        "timeout",
    ),
    "cron.list": (), "cron.get": ("job",), "cron.pause": ("job",), "cron.resume": ("job",),
    "cron.run": ("job",), "cron.rm": ("job",), "cron.runs": ("job", "limit"),
    "estop.set": (), "estop.clear": (), "estop.status": (),
    "kanban.add": ("title", "body", "status", "parent", "depends", "goal"),
    "kanban.list": ("status",), "kanban.get": ("card",),
    "kanban.edit": ("card", "title", "body", "goal", "depends"),
    "kanban.move": ("card", "status"), "kanban.block": ("card", "reason"),
    "kanban.unblock": ("card",), "kanban.run": ("card",), "kanban.specify": ("card",),
    "kanban.decompose": ("card",), "kanban.rm": ("card",), "kanban.wake": (),
    "goal.set": ("session", "text", "max_turns", "draft"), "goal.get": ("session",),
    "goal.pause": ("session",), "goal.resume": ("session",), "goal.clear": ("session",),
    "goal.command": ("session", "text"),
    "loop.set": ("session", "prompt", "every", "times", "until"), "loop.pause": ("session",),
    "loop.resume": ("session",), "loop.stop": ("session",),
    "skills.list": ("cwd",), "skills.show": ("name", "cwd"), "skills.install": ("path", "force"),
    "skills.remove": ("name",), "skills.trust": ("project", "trusted"),
    "skills.pending": (), "skills.approve": ("change",), "skills.reject": ("change",),
    "subagents.pause": (), "subagents.resume": (), "subagents.status": (),
    "checkpoint.list": ("dir",), "checkpoint.diff": ("dir", "number"),
    "checkpoint.restore": ("dir", "number", "session"),
    "events.subscribe": ("session", "since", "epoch", "approvals"),
    "events.unsubscribe": ("session",),
}  # fmt: skip
"""What each method reads (``docs/protocol.md``); ``orphans.kill`` is left out (it kills)."""


@st.composite
def requests(draw: st.DrawFn, session: str) -> tuple[str, dict[str, Any]]:
    """A method and params for it: some of its own names, hostile values, maybe a stray name."""
    method = draw(st.sampled_from(sorted(METHOD_PARAMS)))
    names = draw(st.lists(st.sampled_from(METHOD_PARAMS[method] or ("x",)), unique=True))
    params = {name: draw(VALUES) for name in names}
    if "session" in params and draw(st.booleans()):
        params["session"] = session  # reach past the lookup, into the session
    if draw(st.integers(0, 9)) == 0:
        params[draw(HOSTILE_TEXT.filter(lambda t: len(t) < 100))] = 1
    return method, params


def test_fuzzed_params_to_every_method_never_restart_a_supervisor(
    daemon: Daemon, tmp_path: Path
) -> None:
    live: dict[str, Any] = {}

    async def prepare() -> None:
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            live["session"] = await new_session(client)
            live["before"] = incarnations(await client.call("tree.snapshot"))
            with pytest.raises(GatewayError) as info:  # its answer lists every method
                await client.call("no.such.method")
            live["methods"] = info.value.message.split("(known: ")[1].rstrip(")").split(", ")

    trio.run(prepare)
    assert set(live["methods"]) == {*METHOD_PARAMS, "orphans.kill"}, "a method is not fuzzed"

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(requests(live["session"]), min_size=1, max_size=6))
    def run(batch: list[tuple[str, dict[str, Any]]]) -> None:
        async def go() -> None:
            with trio.fail_after(120):
                async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
                    for index, (method, p) in enumerate(batch):
                        frame = json.dumps({"id": index, "method": method, "params": p})
                        answer = await raw_call(client, frame)
                        assert answer["id"] == index, answer
                        if "error" in answer:
                            assert answer["error"]["code"] != "internal", answer
                    assert (await client.call("daemon.status"))["pid"] == daemon.proc.pid  # type: ignore[union-attr]

        trio.run(go)

    run()

    async def check() -> None:
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            assert_nothing_restarted(live["before"], await client.call("tree.snapshot"))

    trio.run(check)


# -- a lone surrogate from the model's side ------------------------------------------------

SURROGATE_REPLY = "answer with broken text"


@pytest.fixture(scope="module")
def broken_model_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon whose (fake) model answers one prompt with a lone surrogate in its text."""
    fake = FakeProvider()
    fake.when(Reply.of(Text(deltas=("half ", "\ud800", " broken"))), last_user_text=SURROGATE_REPLY)
    root = tmp_path_factory.mktemp("broken-model")
    with ThreadedFake(fake) as served:
        config = f'[model]\nbase_url = "{served.base_url}"\n'
        with running_daemon(root, config, ANTHROPIC_API_KEY="test-key", NO_PROXY="*") as d:
            yield d


async def test_a_surrogate_from_the_model_reaches_every_reader_as_valid_text(
    broken_model_daemon: Daemon,
) -> None:
    daemon = broken_model_daemon
    with trio.fail_after(120):
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            before = incarnations(await client.call("tree.snapshot"))
            session = await new_session(client)
            await client.call("events.subscribe", session=session)
            await client.call("prompt.submit", session=session, text=SURROGATE_REPLY)
            events = await until(client, "turn.completed", session)
            text = "".join(e["payload"]["text"] for e in events if e["type"] == "text.delta")
            assert text == "half \ufffd broken"
            assert events[-1]["payload"]["reason"] == "completed"  # stored, not a store error
        async with connect(daemon.endpoint, use_msgpack=True) as again:  # type: ignore[arg-type]
            await again.call("events.subscribe", session=session, since=0)
            replayed = await until(again, "turn.completed", session)
            assert any("\ufffd" in e["payload"].get("text", "") for e in replayed)
            status, body = await ahttp(daemon, "GET", f"/sessions/{session}")
            assert status == 200, body
            assert body["result"]["messages"] >= 2, body
            assert_nothing_restarted(before, await again.call("tree.snapshot"))
