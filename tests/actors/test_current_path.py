"""``current_path()``: the running actor's path (what the daemon's logs record)."""

from __future__ import annotations

from actors import Actor, ActorSystem, current_path


class Where(Actor):
    async def receive(self, message: object) -> str | None:
        return current_path()


async def test_current_path_names_the_running_actor(system: ActorSystem) -> None:
    ref = await system.spawn(Where(), name="where")
    assert await ref.call("?") == "/where"
    assert current_path() is None
