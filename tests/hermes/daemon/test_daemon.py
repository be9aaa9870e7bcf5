"""The daemon as a process: configuration, the lock, signals, crash recovery, the CLI."""

from __future__ import annotations

import itertools
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import trio

from actors import open_system
from hermes.daemon.config import SCHEMA, ConfigError, load_config
from hermes.daemon.lock import DaemonLock, holder
from hermes.gateway.client import connect
from hermes.model.types import Message
from hermes.store import spawn_store
from hermes.store.event_queries import ReadEvents, StoredEvent
from tests.hermes.daemon.daemon_proc import (
    LONG_PROMPT,
    Daemon,
    daemon_env,
    running_daemon,
    write_config,
)

DOCS = Path(__file__).resolve().parents[3] / "docs" / "config.md"


# -- configuration -------------------------------------------------------------------------


def test_config_errors_name_the_file_key_and_type(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'colour = 1\n[daemon]\nport = "eighty"\nhots = "x"\n[gateway]\nclient_queue = 0\n'
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, {})
    lines = str(info.value).splitlines()
    assert f"{path}: unknown key 'colour'" in lines[0]
    assert (
        f"{path}: [daemon] port: expected an integer >= 0 and <= 65535, got string 'eighty'"
        in lines
    )
    assert any(line.startswith(f"{path}: [daemon] hots: unknown key") for line in lines)
    assert f"{path}: [gateway] client_queue: expected an integer >= 1, got integer 0" in lines
    path.write_text("[daemon\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path, {})


def test_config_defaults_and_environment_overrides(tmp_path: Path) -> None:
    config = load_config(tmp_path / "missing.toml", {})
    assert config.demo and config.model == "hermes-demo"
    assert config.get("daemon", "host") == "127.0.0.1"
    config = load_config(
        None, {"ANTHROPIC_API_KEY": "k", "HERMES_PORT": "9000", "HERMES_DATA_DIR": "/x"}
    )
    assert not config.demo and config.model == "claude-sonnet-4-5"
    assert config.get("daemon", "port") == 9000 and config.get("", "data_dir") == "/x"
    with pytest.raises(ConfigError, match=r"\$HERMES_PORT: expected an integer"):
        load_config(None, {"HERMES_PORT": "lots"})


def test_every_config_key_is_documented() -> None:
    text = DOCS.read_text()
    for section, keys in SCHEMA.items():
        for key in keys:
            name = f"`{section}.{key}`" if section else f"`{key}`"
            assert name in text, f"docs/config.md does not document {name}"


def test_the_lock_is_taken_over_when_its_holder_died(tmp_path: Path) -> None:
    path = tmp_path / "daemon.lock"
    path.write_text("999999\n")  # left by a killed daemon: no flock held
    assert holder(path) is None
    lock = DaemonLock(path)
    lock.acquire()
    try:
        assert lock.stale_pid == 999999
        assert holder(path) is not None
        second = DaemonLock(path)
        with pytest.raises(RuntimeError, match="already running"):
            second.acquire()
    finally:
        lock.release()


def test_an_invalid_config_file_stops_the_daemon_from_starting(tmp_path: Path) -> None:
    config = write_config(tmp_path, "[session]\nbusy_mode = 3\n")
    daemon = Daemon(tmp_path, daemon_env(tmp_path))
    done = daemon.cli("daemon")
    assert done.returncode == 1
    assert f"{config}: [session] busy_mode: expected one of interrupt" in done.stderr
    assert "got integer 3" in done.stderr
    assert not daemon.paths.endpoint_file.exists()


# -- a running daemon ----------------------------------------------------------------------


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    # 1 s an event: a long turn streams for about 40 s, so a CLI started to cancel it
    # (its imports take seconds on a busy machine) always finds it running
    with running_daemon(tmp_path, "[model]\nfake_event_delay = 1.0\n") as d:
        yield d


async def _long_turn(d: Daemon) -> tuple[str, int]:
    """A session with a turn streaming for about 40 s (cancelled by the caller)."""
    async with connect(d.endpoint) as client:  # type: ignore[arg-type]
        session: str = (await client.call("session.create"))["id"]
        await client.call("events.subscribe", session=session)
        accepted = await client.call("prompt.submit", session=session, text=LONG_PROMPT)
        async for event in client.events:
            if event["type"] == "text.delta":
                break
        return session, accepted["turn"]


def test_one_daemon_per_user_and_the_runtime_files(daemon: Daemon) -> None:
    second = daemon.cli("daemon")
    assert second.returncode == 1
    assert f"already running (pid {daemon.proc.pid}" in second.stderr  # type: ignore[union-attr]
    token = daemon.paths.token_file
    assert token.stat().st_mode & 0o777 == 0o600
    assert daemon.paths.runtime_dir.stat().st_mode & 0o777 == 0o700
    info = json.loads(daemon.paths.endpoint_file.read_text())
    assert info["host"] == "127.0.0.1" and info["demo"] is True


def test_cli_cancel_status_sessions_tree_logs(daemon: Daemon) -> None:
    session, turn = trio.run(_long_turn, daemon)
    done = daemon.cli("cancel", session)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"cancelled turn {turn} of {session}"

    status = daemon.cli("daemon", "status", "--json")
    assert status.returncode == 0
    info = json.loads(status.stdout)
    assert info["running"] and info["demo"] and info["model"] == "hermes-demo"
    assert info["pid"] == daemon.proc.pid  # type: ignore[union-attr]

    rows = json.loads(daemon.cli("sessions", "--json").stdout)
    row = next(r for r in rows if r["id"] == session)
    assert row["messages"] == 2 and row["busy"] is False and row["running"] is True

    tree = daemon.cli("tree")
    assert tree.returncode == 0
    assert f"session-{session}  [SessionActor] running" in tree.stdout
    assert "gateway  [GatewayActor] running" in tree.stdout

    logs = daemon.cli("logs", "-n", "500")
    assert "/hermes/providers" in logs.stdout and "offline demo model" in logs.stdout

    missing = daemon.cli("cancel", "no-such-session")
    assert missing.returncode == 1 and missing.stdout == ""
    assert "unknown_session" in missing.stderr
    path = daemon.cli("cancel", "/hermes/sessions/nothing")
    assert path.returncode == 1 and "not_found" in path.stderr


def test_cancel_an_actor_path_from_the_cli(daemon: Daemon) -> None:
    session, turn = trio.run(_long_turn, daemon)
    path = f"/hermes/sessions/sup/session-{session}/turn-{turn}"
    done = daemon.cli("cancel", path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"cancelled {path}: cancelled by gateway")
    rows = json.loads(daemon.cli("sessions", "--json").stdout)
    assert next(r for r in rows if r["id"] == session)["busy"] is False


def test_sigterm_mid_turn_cancels_it_in_phases_and_the_client_sees_it_then_its_close(
    daemon: Daemon,
) -> None:
    # Before the phased shutdown the gateway went first: the client got its close frame
    # and never heard that its turn was cancelled; the turn ended as killed.
    async def mid_turn() -> tuple[str, list[dict[str, Any]], tuple[int, str | None]]:
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            session: str = (await client.call("session.create"))["id"]
            await client.call("events.subscribe", session=session)
            await client.call("prompt.submit", session=session, text=LONG_PROMPT)
            seen: list[dict[str, Any]] = []
            async for event in client.events:
                seen.append(event)
                if event["type"] == "text.delta":
                    break
            daemon.signal(signal.SIGTERM)
            seen += [event async for event in client.events]  # up to the close frame
            closed = client.ws.closed
            assert closed is not None
            return session, seen, (closed.code, closed.reason)

    started = time.monotonic()
    session, seen, closed = trio.run(mid_turn)
    code, _out, err = daemon.wait()
    assert code == 0, err
    assert time.monotonic() - started < 30
    assert not daemon.paths.endpoint_file.exists() and not daemon.paths.token_file.exists()
    assert holder(daemon.paths.lock_file) is None

    # The client heard its turn end as cancelled by the shutdown, then the notice, then 1001.
    types = [event["type"] for event in seen]
    ended = next(event for event in seen if event["type"] == "turn.completed")
    assert ended["payload"]["reason"] == "cancelled", ended
    assert ended["payload"]["detail"] == "the daemon is stopping"
    assert types[-1] == "daemon.stopping" and types.index("turn.completed") < len(types) - 1
    assert closed == (1001, "daemon stopping")

    async def stored() -> tuple[list[Message], list[StoredEvent]]:
        async with open_system("check") as system:
            store = await spawn_store(system, daemon.paths.data_dir)
            transcript = await store.load(session)
            events = await store.request(ReadEvents(session, after=0))
            return list(transcript.messages), events

    messages, events = trio.run(stored)
    # The transcript is valid and the reply so far was kept, marked cancelled ...
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[-1].text().endswith("[cancelled]")
    # ... and the turn's end was stored before the store checkpointed and closed.
    ends = [msgpack.unpackb(e.payload) for e in events if e.type == "TurnCompleted"]
    assert [(e["reason"], e["detail"]) for e in ends] == [("cancelled", "the daemon is stopping")]
    # Nothing ran over: the log says so, phase by phase.
    messages_logged = [e["msg"] for e in daemon.log_entries()]
    assert any(m.startswith("shutdown phase cancel-turns done") for m in messages_logged)
    summary = next(m for m in messages_logged if m.startswith("shutdown in "))
    assert "nothing ran over (stop-input, cancel-turns, flush-stores, close-surfaces, " in summary
    report = json.loads(daemon.paths.shutdown_file.read_text())
    assert report["clean"] and report["pid"] == daemon.proc.pid  # type: ignore[union-attr]


def test_sighup_reloads_the_configuration(daemon: Daemon) -> None:
    write_config(daemon.root, "[model]\nfake_event_delay = 0.2\n[logging]\nlevel = 'debug'\n")
    daemon.signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        messages = [e["msg"] for e in daemon.log_entries()]
        if any(m.startswith("configuration reloaded") for m in messages):
            break
        time.sleep(0.05)
    reloaded = next(m for m in messages if m.startswith("configuration reloaded"))
    assert "applied: [logging] level" in reloaded
    write_config(daemon.root, "[logging]\nlevel = 'loud'\n")
    daemon.signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        entries = daemon.log_entries()
        if any(e["msg"].startswith("reload refused") for e in entries):
            break
        time.sleep(0.05)
    refused = next(e for e in entries if e["msg"].startswith("reload refused"))
    assert "[logging] level: expected one of debug" in refused["msg"]
    assert daemon.cli("daemon", "status").returncode == 0  # still serving


def test_a_killed_daemon_restarts_with_its_sessions_and_valid_history(tmp_path: Path) -> None:
    with running_daemon(tmp_path, "[model]\nfake_event_delay = 0.05\n") as first:
        done = first.cli("send", "hello there", "--json")
        assert done.returncode == 0, done.stderr
        kept = json.loads(done.stdout)["session"]
        mid_turn, _ = trio.run(_long_turn, first)
        first.kill()  # SIGKILL, mid-turn
        assert first.proc is not None and first.proc.returncode == -signal.SIGKILL
    lock = first.paths.lock_file
    assert lock.read_text().split()[0] == str(first.proc.pid)  # the stale lock is still there
    second = Daemon(tmp_path, first.env)
    second.start()
    try:
        rows = {r["id"]: r for r in json.loads(second.cli("sessions", "--json").stdout)}
        assert rows[kept]["messages"] == 2 and not rows[kept]["ended"]
        assert mid_turn in rows
        again = second.cli("send", "hello again", "--session", mid_turn, "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["reason"] == "completed"
        entries = second.log_entries()
        assert any("stale lock" in e["msg"] and str(first.proc.pid) in e["msg"] for e in entries)
    finally:
        second.kill()

    async def roles() -> list[str]:
        async with open_system("check") as system:
            store = await spawn_store(system, first.paths.data_dir)
            return [m.role for m in (await store.load(mid_turn)).messages]

    history = trio.run(roles)
    assert history[0] == "user" and history[-1] == "assistant"
    assert all(a != b for a, b in itertools.pairwise(history))
