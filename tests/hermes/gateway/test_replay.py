"""Persisted event replay: ``since`` older than the in-memory ring, and across a restart."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import trio

from hermes.gateway.client import Client, connect
from tests.hermes.daemon.daemon_proc import Daemon, daemon_env, write_config
from tests.hermes.gateway.test_gateway import new_session, until


def _drain(client: Client) -> None:
    """Events already received (of an earlier subscription)."""
    while True:
        try:
            client.events.receive_nowait()
        except trio.WouldBlock:
            return


async def _replayed(client: Client, session: str, **params: Any) -> tuple[dict[str, Any], list]:
    _drain(client)
    sub = await client.call("events.subscribe", session=session, **params)
    frames = [await client.events.receive() for _ in range(sub["replayed"] + bool(sub["missed"]))]
    return sub, [f for f in frames if f["type"] != "events.dropped"]


async def _stored_all(client: Client, session: str) -> tuple[dict[str, Any], list]:
    """Subscribe from 0 until the writer has caught up (it batches every 50 ms)."""
    for _ in range(100):
        sub, frames = await _replayed(client, session, since=0)
        if sub["missed"] == 0:
            return sub, frames
        await trio.sleep(0.05)
    raise AssertionError("the events never reached the database")


async def test_since_older_than_the_ring_and_across_a_restart_comes_from_the_database(
    tmp_path: Path,
) -> None:
    write_config(tmp_path, "[gateway]\nreplay_events = 4\n")
    env = daemon_env(tmp_path)
    first = Daemon(tmp_path, env)
    await trio.to_thread.run_sync(first.start)
    try:
        with trio.fail_after(20):
            async with connect(first.endpoint) as client:  # type: ignore[arg-type]
                session = await new_session(client)
                await client.call("events.subscribe", session=session)
                await client.call("prompt.submit", session=session, text="list the files here")
                live = await until(client, "turn.completed", session)
                await client.call("events.unsubscribe", session=session)
                sub, frames = await _stored_all(client, session)
                epoch = sub["epoch"]
        assert sub["seq"] == live[-1]["seq"] > 4 and sub["stored"] == sub["seq"] - 4
        assert [f["seq"] for f in frames] == list(range(1, sub["seq"] + 1))

        def plain(events: list[dict[str, Any]]) -> tuple[list[Any], str]:
            """Events without deltas (a live client may get them merged), and the text."""
            deltas = [e for e in events if e["type"] == "text.delta"]
            kept = [(e["seq"], e["type"], e["payload"]) for e in events if e not in deltas]
            return kept, "".join(e["payload"]["text"] for e in deltas)

        assert plain(frames) == plain(live)
        # the last turn's events are written at a graceful stop
        with trio.fail_after(20):
            async with connect(first.endpoint) as client:  # type: ignore[arg-type]
                await client.call("events.subscribe", session=session)
                await client.call("prompt.submit", session=session, text="hello again")
                last = (await until(client, "turn.completed", session))[-1]["seq"]
        first.signal(signal.SIGTERM)
        code, _, err = await trio.to_thread.run_sync(first.wait)
        assert code == 0, err
    finally:
        first.kill()

    second = Daemon(tmp_path, env)
    await trio.to_thread.run_sync(second.start)
    try:
        with trio.fail_after(20):
            async with connect(second.endpoint) as client:  # type: ignore[arg-type]
                sub, frames = await _replayed(client, session, since=2, epoch=epoch)
                assert sub["epoch_changed"] and sub["epoch"] != epoch
                assert sub["missed"] == 0 and sub["seq"] == last
                assert [f["seq"] for f in frames] == list(range(3, last + 1))
                assert frames[-1]["type"] == "turn.completed"
                # numbering goes on from the stored events
                await client.call("prompt.submit", session=session, text="and once more")
                started = (await until(client, "turn.started", session))[-1]
                assert started["seq"] == last + 1
    finally:
        second.kill()
