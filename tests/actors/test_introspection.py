"""``system.snapshot()``: the whole tree as plain, JSON-ready data."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing

from actors import Actor, ActorRef, ActorSystem


class Node(Actor):
    """Spawns the named children in on_start; traps exits so dead children are only noted."""

    trap_exits = True

    def __init__(self, *children: str) -> None:
        self.child_names = children
        self.kids: dict[str, ActorRef] = {}

    async def on_start(self) -> None:
        for name in self.child_names:
            self.kids[name] = await self.ctx.spawn(Node(), name=name)

    async def receive(self, message: Any) -> Any:
        match message:
            case "crash":
                raise RuntimeError("node crashed on purpose")
            case "stop-self":
                self.ctx.stop()
            case ("hold", event):
                await event.wait()
            case ("beat", activity):
                self.ctx.beat(activity)
            case _:
                return message
        return None


def find(tree: dict[str, Any], path: str) -> dict[str, Any]:
    """The node at ``path`` anywhere under ``tree``."""
    for child in tree["children"]:
        if child["path"] == path:
            return child
        if path.startswith(child["path"] + "/"):
            return find(child, path)
    raise AssertionError(f"{path} not in snapshot")


async def test_snapshot_is_plain_data(system: ActorSystem) -> None:
    root = Node("a", "b")
    await system.spawn(root, name="root", register="root-name")
    await root.kids["b"].cast("crash")
    await root.kids["b"].wait_exited()
    snap = system.snapshot()
    assert json.loads(json.dumps(snap)) == snap


async def test_snapshot_shows_the_nested_tree(system: ActorSystem) -> None:
    root = Node("a", "b")
    ref = await system.spawn(root, name="root", register="root-name", restarts=2)
    await root.kids["a"].call("ping")  # it has handled one message
    snap = system.snapshot()
    assert snap["system"] == "test"
    assert snap["actors"] == 3
    assert snap["names"] == {"root-name": "/root"}
    [top] = snap["children"]
    assert top["path"] == "/root"
    assert top["id"] == ref.id
    assert top["class"] == "Node"
    assert top["state"] == "running"
    assert top["name"] == "root-name"
    assert top["restarts"] == 2
    assert top["trap_exits"] is True
    assert [c["path"] for c in top["children"]] == ["/root/a", "/root/b"]
    child = find(snap, "/root/a")
    assert child["class"] == "Node"
    assert child["state"] == "running"
    assert child["restarts"] == 0
    assert child["children"] == []
    assert "name" not in child
    assert child["mailbox"]["received"] == 1
    assert child["mailbox"]["capacity"] == 1000
    assert child["mailbox"]["overflow"] == "block"


async def test_snapshot_shows_mailbox_depth_and_high_water(system: ActorSystem) -> None:
    ref = await system.spawn(Node(), name="busy")
    release = trio.Event()
    await ref.cast(("hold", release))
    for i in range(3):
        await ref.cast(i)
    box = find(system.snapshot(), "/busy")["mailbox"]
    assert box["depth"] == 3
    assert box["high_water"] >= 3
    assert box["received"] == 4
    release.set()
    assert await ref.call("drained") == "drained"
    box = find(system.snapshot(), "/busy")["mailbox"]
    assert box["depth"] == 0
    assert box["high_water"] >= 3
    assert box["received"] == 5


async def test_snapshot_shows_heartbeat_age_uptime_and_activity(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    ref = await system.spawn(Node(), name="idle")
    await trio.sleep(5)
    node = find(system.snapshot(), "/idle")
    assert node["uptime"] == pytest.approx(5.0)
    assert node["heartbeat_age"] == pytest.approx(5.0)
    assert "last_activity" not in node
    await trio.sleep(2)
    await ref.call(("beat", "indexing"))
    await trio.sleep(1)
    snap = system.snapshot()
    node = find(snap, "/idle")
    assert node["uptime"] == pytest.approx(8.0)
    assert node["heartbeat_age"] == pytest.approx(1.0)
    assert node["last_activity"] == "indexing"
    assert snap["uptime"] >= 8.0


async def test_snapshot_shows_recent_exits_of_dead_children(system: ActorSystem) -> None:
    root = Node("crasher", "quitter", "stays")
    await system.spawn(root, name="root")
    await root.kids["crasher"].cast("crash")
    await root.kids["quitter"].call("stop-self")
    await root.kids["crasher"].wait_exited()
    await root.kids["quitter"].wait_exited()
    top = find(system.snapshot(), "/root")
    assert [c["path"] for c in top["children"]] == ["/root/stays"]
    exits = {e["path"]: e for e in top["recent_exits"]}
    assert set(exits) == {"/root/crasher", "/root/quitter"}
    crashed = exits["/root/crasher"]["reason"]
    assert crashed["kind"] == "error"
    assert "RuntimeError: node crashed on purpose" in crashed["detail"]
    assert "node crashed on purpose" in crashed["traceback"]
    assert exits["/root/quitter"]["reason"] == {"kind": "normal", "detail": ""}
    assert all(e["age"] >= 0 for e in exits.values())


async def test_system_snapshot_shows_recent_top_level_exits(system: ActorSystem) -> None:
    ref = await system.spawn(Node(), name="gone")
    await ref.stop()
    snap = system.snapshot()
    assert snap["children"] == []
    assert snap["actors"] == 0
    [gone] = snap["recent_exits"]
    assert gone["path"] == "/gone"
    assert gone["reason"]["kind"] == "shutdown"


async def test_trio_task_count_sees_tasks_come_and_go() -> None:
    from actors import trio_task_count

    before = trio_task_count()
    release = trio.Event()
    async with trio.open_nursery() as nursery:
        for _ in range(5):
            nursery.start_soon(release.wait)
        await trio.testing.wait_all_tasks_blocked()
        during = trio_task_count()
        release.set()
    assert during == before + 5
    assert trio_task_count() == before
