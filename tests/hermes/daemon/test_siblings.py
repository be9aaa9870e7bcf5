"""``siblings``: a daemon child finds the actors beside its parent, or says which are missing."""

from __future__ import annotations

from typing import Any

from actors import Actor, ActorSystem
from hermes.daemon.siblings import siblings


class Idle(Actor):
    async def receive(self, message: Any) -> Any:
        return message


class Finder(Actor):
    """Looks up the siblings it is asked for; returns the refs' paths or the error's text."""

    async def receive(self, message: Any) -> Any:
        try:
            return [ref.path for ref in siblings(self.ctx, "kanban", *message)]
        except RuntimeError as exc:
            return str(exc)


class Sup(Actor):
    async def receive(self, message: Any) -> Any:
        finder = await self.ctx.spawn(Finder(), name="finder")
        return await finder.call(message)


async def test_siblings_are_found_in_order_or_the_missing_are_named(system: ActorSystem) -> None:
    await system.spawn(Idle(), name="store")
    await system.spawn(Idle(), name="providers")
    sup = await system.spawn(Sup(), name="kanban")
    assert await sup.call(("providers", "store")) == ["/providers", "/store"]
    sup2 = await system.spawn(Sup(), name="cron")
    assert await sup2.call(("store", "sessions", "providers")) == (
        "store, sessions, providers must start before kanban (missing: sessions)"
    )
