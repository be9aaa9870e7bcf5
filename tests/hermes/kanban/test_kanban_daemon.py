"""The board in a real daemon over a real WebSocket (the offline demo model as worker)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from hermes.gateway.client import Client, GatewayError, connect
from tests.hermes.daemon.daemon_proc import Daemon, running_daemon
from tests.hermes.daemon.test_cron_daemon import http


async def until_status(client: Client, card_id: str, status: str) -> dict[str, Any]:
    with trio.fail_after(90):
        while True:
            card: dict[str, Any] = await client.call("kanban.get", card=card_id)
            if card["status"] == status:
                return card
            await trio.sleep(0.1)


def test_a_card_runs_in_a_worker_session_and_is_blocked_when_it_never_hands_off(
    tmp_path: Path,
) -> None:
    async def main(daemon: Daemon) -> str:
        async with connect(daemon.endpoint) as client:  # type: ignore[arg-type]
            with pytest.raises(GatewayError) as unknown:
                await client.call("kanban.get", card="card-nope")
            assert unknown.value.code == "not_found"
            with pytest.raises(GatewayError) as bad:
                await client.call("kanban.add", title="x", colour="red")
            assert bad.value.code == "invalid_params" and "'colour'" in bad.value.message
            card = await client.call("kanban.add", title="say hello", body="reply hello")
            blocked = await until_status(client, card["id"], "blocked")
            assert "without calling kanban_complete" in blocked["block_reason"]
            session = await client.call("session.get", session=blocked["assignee"])
            assert session["title"] == "kanban: say hello"
            with trio.fail_after(30):  # the worker's session is closed with its run
                while True:
                    shown = await client.call("session.get", session=blocked["assignee"])
                    if shown["ended"]:
                        break
                    await trio.sleep(0.1)
            with pytest.raises(GatewayError) as move:
                await client.call("kanban.move", card=card["id"], status="review")
            assert move.value.code == "invalid_params"
            assert "cannot move from blocked to review" in move.value.message
            return str(card["id"])

    with running_daemon(tmp_path, "[kanban]\nauto_decompose = false\n") as daemon:
        card_id = trio.run(main, daemon)
        status, listed = trio.run(http, daemon, "GET", "/kanban")
        assert status == 200 and [c["id"] for c in listed] == [card_id]
        status, moved = trio.run(
            http, daemon, "POST", f"/kanban/{card_id}/move", {"status": "done"}
        )
        assert status == 200 and moved["status"] == "done"
        shown = daemon.cli("kanban", "show", card_id, "--json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["status"] == "done"
        wrong = daemon.cli("kanban", "move", card_id, "running")
        assert wrong.returncode != 0 and "only when a worker takes it" in wrong.stderr
