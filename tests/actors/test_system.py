"""``open_system`` and ``ActorSystem``: shutdown order, errors, spawn validation."""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio

from actors import Actor, ActorSystem, ExitKind, ExitReason, NotRunning, open_system


class Logged(Actor):
    def __init__(self, log: list[tuple[str, ExitKind]]) -> None:
        self.log = log

    async def receive(self, message: Any) -> Any:
        return message

    async def on_stop(self, reason: ExitReason) -> None:
        self.log.append((self.ctx.path, reason.kind))


async def test_open_system_stops_top_level_actors_in_reverse_start_order() -> None:
    log: list[tuple[str, ExitKind]] = []
    with trio.fail_after(10):
        async with open_system("order") as system:
            refs = [await system.spawn(Logged(log), name=n) for n in ("a", "b", "c")]
            assert system.top_level() == refs
    assert log == [
        ("/c", ExitKind.SHUTDOWN),
        ("/b", ExitKind.SHUTDOWN),
        ("/a", ExitKind.SHUTDOWN),
    ]
    assert all(not r.is_alive for r in refs)
    assert system.top_level() == []


async def test_error_in_open_system_body_comes_out_bare() -> None:
    log: list[tuple[str, ExitKind]] = []
    with pytest.raises(KeyError) as info, trio.fail_after(10):
        async with open_system("failing") as system:
            await system.spawn(Logged(log), name="a")
            raise KeyError("from the body")
    assert type(info.value) is KeyError
    assert info.value.args == ("from the body",)
    # The actors were still shut down gracefully.
    assert log == [("/a", ExitKind.SHUTDOWN)]


async def test_spawn_after_open_system_exits_is_not_running() -> None:
    async with open_system("closed") as system:
        pass
    with pytest.raises(NotRunning, match="closed"):
        await system.spawn(Logged([]))


async def test_spawn_after_shutdown_is_not_running(system: ActorSystem) -> None:
    await system.spawn(Logged([]), name="before")
    await system.shutdown()
    assert system.top_level() == []
    with pytest.raises(NotRunning):
        await system.spawn(Logged([]), name="after")
    assert system.lookup("/after") is None


async def test_same_actor_instance_cannot_be_spawned_twice(system: ActorSystem) -> None:
    actor = Logged([])
    ref = await system.spawn(actor, name="once")
    with pytest.raises(ValueError, match="already spawned"):
        await system.spawn(actor, name="twice")
    assert system.lookup("/twice") is None
    await ref.stop()
    # Not even after the first incarnation has exited.
    with pytest.raises(ValueError, match="already spawned"):
        await system.spawn(actor, name="again")


async def test_spawn_rejects_a_non_actor(system: ActorSystem) -> None:
    with pytest.raises(TypeError, match="Actor instance"):
        await system.spawn(object())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"shutdown": -1}, "shutdown"),
        ({"shutdown": True}, "shutdown"),
        ({"shutdown": "5"}, "shutdown"),
        ({"shutdown": math.nan}, "shutdown"),
        ({"start_timeout": -0.5}, "start_timeout"),
        ({"name": "a/b"}, "name"),
        ({"name": ""}, "name"),
    ],
)
async def test_invalid_spawn_arguments_are_rejected_naming_the_field(
    system: ActorSystem, kwargs: dict[str, Any], field: str
) -> None:
    actor = Logged([])
    with pytest.raises(ValueError, match=field) as info:
        await system.spawn(actor, **kwargs)
    assert repr(next(iter(kwargs.values()))) in str(info.value)
    assert system.top_level() == []
    assert system.snapshot()["actors"] == 0


async def test_spawn_accepts_infinite_and_zero_budgets(system: ActorSystem) -> None:
    ref = await system.spawn(Logged([]), shutdown=math.inf, start_timeout=0)
    assert await ref.call("hi") == "hi"
    assert (await ref.stop()).kind is ExitKind.SHUTDOWN
