"""Registered names and paths: uniqueness, look-up, and release on every kind of exit."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing
from trio.testing import MockClock

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    Exit,
    ExitKind,
    NameTaken,
    StartFailed,
)

# == actors ==========================================================================


class Idle(Actor):
    """Replies "pong"; "stop" stops it normally, "crash" raises, "hang" never returns."""

    async def receive(self, message: Any) -> Any:
        if message == "stop":
            self.ctx.stop()
        elif message == "crash":
            raise RuntimeError("crash on request")
        elif message == "hang":
            await trio.sleep_forever()
        return "pong"


class FailsToStart(Actor):
    async def on_start(self) -> None:
        raise RuntimeError("cannot start")


class NeverStarts(Actor):
    async def on_start(self) -> None:
        await trio.sleep_forever()


class Stubborn(Actor):
    """Ignores cancellation for 100 s once it gets "go" (it ends up reported unkillable)."""

    async def receive(self, message: Any) -> Any:
        with trio.CancelScope(shield=True):
            await trio.sleep(100)
        return message


class Parent(Actor):
    """Spawns children on request: ("spawn", name, register) returns the ref or the error."""

    trap_exits = True

    def __init__(self) -> None:
        self.exits: list[Exit] = []

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Exit):
            self.exits.append(message)
            return None
        kind, name, register = message
        actor = Stubborn() if kind == "spawn-stubborn" else Idle()
        try:
            return await self.ctx.spawn(actor, name=name, register=register)
        except (NameTaken, ValueError) as exc:
            return exc


# == helpers =========================================================================


async def end(ref: ActorRef, how: str) -> ExitKind:
    """Make ``ref`` exit in the way ``how`` names; return the kind of exit."""
    if how == "stop":
        await ref.stop()
    elif how == "kill":
        await ref.kill()
    else:
        await ref.cast({"normal": "stop", "crash": "crash"}[how])
        with trio.fail_after(60):
            await ref.wait_exited()
    assert ref.exit_reason is not None
    return ref.exit_reason.kind


HOW = {
    "normal": ExitKind.NORMAL,
    "stop": ExitKind.SHUTDOWN,
    "crash": ExitKind.ERROR,
    "kill": ExitKind.CANCELLED,
}


# == registration ====================================================================


async def test_spawn_registers_a_name(system: ActorSystem, autojump_clock: MockClock) -> None:
    ref = await system.spawn(Idle(), name="worker", register="x")
    assert system.whereis("x") == ref
    assert system.registry.names() == {"x": "/worker"}
    assert system.snapshot()["names"] == {"x": "/worker"}
    assert await system.whereis("x").call("ping") == "pong"  # type: ignore[union-attr]


async def test_whereis_unknown_name_is_none(system: ActorSystem, autojump_clock: MockClock) -> None:
    await system.spawn(Idle(), register="x")
    assert system.whereis("y") is None


async def test_duplicate_registered_name_is_taken(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    first = await system.spawn(Idle(), name="a", register="x")
    with pytest.raises(NameTaken) as info:
        await system.spawn(Idle(), name="b", register="x")
    assert info.value.name == "x"
    assert info.value.holder == "/a"
    assert "'x' is already taken by /a" in str(info.value)
    # The refused actor never started, and the first one keeps its name.
    assert system.whereis("x") == first
    assert system.lookup("/b") is None
    assert system.top_level() == [first]


async def test_registered_names_are_system_wide(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    await system.spawn(Idle(), register="x")
    parent = await system.spawn(Parent(), name="p")
    error = await parent.call(("spawn", "child", "x"))
    assert isinstance(error, NameTaken)
    assert system.lookup("/p/child") is None


async def test_child_can_register_a_name(system: ActorSystem, autojump_clock: MockClock) -> None:
    parent = await system.spawn(Parent(), name="p")
    child = await parent.call(("spawn", "c", "kid"))
    assert isinstance(child, ActorRef)
    assert system.whereis("kid") == child
    assert child.path == "/p/c"


async def test_duplicate_top_level_name_is_taken(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    first = await system.spawn(Idle(), name="a")
    with pytest.raises(NameTaken) as info:
        await system.spawn(Idle(), name="a")
    assert (info.value.name, info.value.holder) == ("a", "/a")
    assert system.top_level() == [first]


async def test_duplicate_sibling_name_is_taken(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    parent = await system.spawn(Parent(), name="p")
    first = await parent.call(("spawn", "c", None))
    error = await parent.call(("spawn", "c", None))
    assert isinstance(error, NameTaken)
    assert (error.name, error.holder) == ("c", "/p/c")
    assert system.lookup("/p/c") == first


async def test_same_name_under_different_parents_is_fine(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    p = await system.spawn(Parent(), name="p")
    q = await system.spawn(Parent(), name="q")
    a = await p.call(("spawn", "c", None))
    b = await q.call(("spawn", "c", None))
    assert (a.path, b.path) == ("/p/c", "/q/c")
    assert a != b


# == release on exit =================================================================


@pytest.mark.parametrize("how", list(HOW))
async def test_name_and_path_are_released_on_exit(
    system: ActorSystem, autojump_clock: MockClock, how: str
) -> None:
    ref = await system.spawn(Idle(), name="a", register="x")
    if how == "kill":
        await ref.cast("hang")  # killed in the middle of a message
    with trio.fail_after(60):
        assert await end(ref, how) is HOW[how]
    assert system.whereis("x") is None
    assert system.lookup("/a") is None
    assert system.registry.names() == {}
    assert system.top_level() == []
    again = await system.spawn(Idle(), name="a", register="x")
    assert system.whereis("x") == again
    assert system.lookup("/a") == again
    assert again != ref


@pytest.mark.parametrize("actor_class", [FailsToStart, NeverStarts])
async def test_name_and_path_are_released_when_start_fails(
    system: ActorSystem, autojump_clock: MockClock, actor_class: type[Actor]
) -> None:
    with trio.fail_after(60), pytest.raises(StartFailed) as info:
        await system.spawn(actor_class(), name="a", register="x", start_timeout=1)
    assert info.value.path == "/a"
    assert system.whereis("x") is None
    assert system.lookup("/a") is None
    assert await system.spawn(Idle(), name="a", register="x") == system.whereis("x")


@pytest.mark.parametrize("how", list(HOW))
async def test_child_name_and_path_are_released_on_exit(
    system: ActorSystem, autojump_clock: MockClock, how: str
) -> None:
    parent = await system.spawn(Parent(), name="p")
    child = await parent.call(("spawn", "c", "kid"))
    with trio.fail_after(60):
        assert await end(child, how) is HOW[how]
    assert system.whereis("kid") is None
    assert system.lookup("/p/c") is None
    assert parent.is_alive  # it traps exits
    again = await parent.call(("spawn", "c", "kid"))
    assert isinstance(again, ActorRef)
    assert system.lookup("/p/c") == again
    assert system.whereis("kid") == again


async def test_children_paths_are_released_with_their_parent(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    parent = await system.spawn(Parent(), name="p")
    await parent.call(("spawn", "c", "kid"))
    await parent.stop()
    assert system.lookup("/p") is None
    assert system.lookup("/p/c") is None
    assert system.whereis("kid") is None
    assert len(system.registry) == 0


async def test_unkillable_child_frees_its_name_for_a_replacement(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    parent = await system.spawn(Parent(), name="p")
    stubborn = await parent.call(("spawn-stubborn", "c", "kid"))
    await stubborn.cast("go")
    await trio.testing.wait_all_tasks_blocked()
    with trio.fail_after(60):
        assert (await stubborn.kill()).kind is ExitKind.UNKILLABLE
    assert system.lookup("/p/c") is None
    assert system.whereis("kid") is None
    again = await parent.call(("spawn", "c", "kid"))
    assert isinstance(again, ActorRef)
    assert system.lookup("/p/c") == again
    assert system.whereis("kid") == again


async def test_unkillable_top_level_actor_frees_its_name_for_a_replacement(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    stubborn = await system.spawn(Stubborn(), name="a", register="x")
    await stubborn.cast("go")
    await trio.testing.wait_all_tasks_blocked()
    with trio.fail_after(60):
        assert (await stubborn.kill()).kind is ExitKind.UNKILLABLE
    assert system.lookup("/a") is None
    assert system.whereis("x") is None
    again = await system.spawn(Idle(), name="a", register="x")
    assert system.lookup("/a") == again
    assert system.whereis("x") == again


# == look-up =========================================================================


async def test_lookup_by_path(system: ActorSystem, autojump_clock: MockClock) -> None:
    parent = await system.spawn(Parent(), name="a")
    child = await parent.call(("spawn", "b", None))
    grandchild_parent = await system.spawn(Parent(), name="other")
    assert system.lookup("/a") == parent
    assert system.lookup("/a/b") == child
    assert system.lookup("/other") == grandchild_parent
    assert system.lookup("/b") is None
    assert system.lookup("/a/c") is None
    assert system.lookup("a/b") is None


async def test_default_name_is_class_and_id(system: ActorSystem, autojump_clock: MockClock) -> None:
    ref = await system.spawn(Idle())
    assert ref.path == f"/idle-{ref.id}"
    assert ref.name == f"idle-{ref.id}"
    assert system.lookup(ref.path) == ref


# == bad names =======================================================================


@pytest.mark.parametrize("name", ["", "a/b", "/a", "a/"])
async def test_bad_actor_name_is_rejected(
    system: ActorSystem, autojump_clock: MockClock, name: str
) -> None:
    with pytest.raises(ValueError, match="actor name must be a non-empty str without '/'"):
        await system.spawn(Idle(), name=name)
    assert system.top_level() == []
    assert len(system.registry) == 0


@pytest.mark.parametrize("name", ["", "a/b"])
async def test_bad_child_name_is_rejected(
    system: ActorSystem, autojump_clock: MockClock, name: str
) -> None:
    parent = await system.spawn(Parent(), name="p")
    error = await parent.call(("spawn", name, None))
    assert isinstance(error, ValueError)
    assert "actor name must be" in str(error)
    assert len(system.registry) == 1


async def test_empty_registered_name_is_rejected(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with pytest.raises(ValueError, match="registered name must be a non-empty str"):
        await system.spawn(Idle(), name="a", register="")
    assert system.lookup("/a") is None
    assert system.registry.names() == {}
