"""Runtime administration: start/terminate/restart/delete children and introspection."""

from __future__ import annotations

import pytest
import trio
from trio.testing import MockClock

from actors import ActorSystem, ExitKind, StartFailed
from supervisors import (
    AlreadyPresent,
    AlreadyStarted,
    Backoff,
    ChildCounts,
    ChildNotFound,
    ChildRestarting,
    ChildRunning,
    ChildSpec,
    ChildType,
    Restart,
    SpecError,
    Supervisor,
)

from .helpers import Log, crash, ignore_factory, ref_of, spec, start_sup, starts, states, stops

SLOW_RESTART = Backoff(min=10, max=10, random_factor=0)


async def test_start_child_appends_a_running_child(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("a", log)])
        handle = await client.start_child(spec("b", log))
        assert handle is not None and handle.ref is not None
        assert handle.ref.path == "/sup/b"
        assert await handle.ref.call("ping") == ("pong", "b", 0)
        assert [c.id for c in await client.which_children()] == ["a", "b"]
        assert starts(log) == ["a", "b"]


async def test_start_child_already_started_and_already_present(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("a")])
        running = await ref_of(client, "a")
        with pytest.raises(AlreadyStarted) as started:
            await client.start_child(spec("a"))
        assert started.value.child_id == "a"
        assert started.value.ref == running
        await client.terminate_child("a")
        with pytest.raises(AlreadyPresent) as present:
            await client.start_child(spec("a"))
        assert present.value.child_id == "a"
        assert not isinstance(present.value, AlreadyStarted)


async def test_start_child_that_fails_to_start_is_not_kept(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        sup, client = await start_sup(system, [spec("a")])
        with pytest.raises(StartFailed) as info:
            await client.start_child(spec("bad", None, {"fail_start": True}))
        assert info.value.path == "/sup/bad"
        assert str(info.value.reason.error) == "bad failed to start"
        with pytest.raises(ChildNotFound):
            await client.get_childspec("bad")
        assert sup.is_alive
        assert await states(client) == {"a": "running"}


async def test_start_child_returning_ignore(system: ActorSystem, autojump_clock: MockClock) -> None:
    with trio.fail_after(10):
        _, client = await start_sup(system, [])
        assert await client.start_child(ChildSpec("i", ignore_factory)) is None
        assert await states(client) == {"i": "stopped"}
        with pytest.raises(AlreadyPresent):
            await client.start_child(ChildSpec("i", ignore_factory))
        temporary = ChildSpec("t", ignore_factory, restart=Restart.TEMPORARY)
        assert await client.start_child(temporary) is None
        assert await states(client) == {"i": "stopped"}


async def test_start_child_checks_significant_against_auto_shutdown(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, client = await start_sup(system, [])
        with pytest.raises(SpecError, match="invalid child spec significant: True for 's'"):
            await client.start_child(spec("s", restart=Restart.TRANSIENT, significant=True))
        assert await client.which_children() == []


async def test_terminate_child_is_idempotent_and_keeps_the_spec(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(100):
        _, client = await start_sup(system, [spec("a", log), spec("b", log)])
        child_spec = await client.get_childspec("a")
        await client.terminate_child("a")
        await client.terminate_child("a")
        assert stops(log) == [("a", ExitKind.SHUTDOWN)]
        assert await states(client) == {"a": "stopped", "b": "running"}
        assert await client.get_childspec("a") is child_spec
        await trio.sleep(10)
        assert await states(client) == {"a": "stopped", "b": "running"}  # not restarted


async def test_terminate_child_forgets_a_temporary_child(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("t", restart=Restart.TEMPORARY)])
        await client.terminate_child("t")
        with pytest.raises(ChildNotFound) as info:
            await client.get_childspec("t")
        assert info.value.child_id == "t"
        await client.terminate_child("t")  # already gone: ok (idempotent by id)


async def test_terminate_child_by_ref_and_unknown_child(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("a")])
        ref = await ref_of(client, "a")
        await client.terminate_child(ref)
        assert ref.exit_reason is not None and ref.exit_reason.kind is ExitKind.SHUTDOWN
        assert await states(client) == {"a": "stopped"}
        with pytest.raises(ChildNotFound, match="no child 'zzz'"):
            await client.terminate_child("zzz")


async def test_restart_child_outcomes(system: ActorSystem, autojump_clock: MockClock) -> None:
    log: Log = []
    specs = [spec("a", log), spec("r", log), ChildSpec("i", ignore_factory)]
    with trio.fail_after(100):
        _, client = await start_sup(system, specs, backoff=SLOW_RESTART)
        with pytest.raises(ChildRunning) as running:
            await client.restart_child("a")
        assert running.value.child_id == "a"
        await crash(client, "r")
        with pytest.raises(ChildRestarting) as restarting:
            await client.restart_child("r")
        assert restarting.value.child_id == "r"
        with pytest.raises(ChildNotFound):
            await client.restart_child("nope")
        assert await client.restart_child("i") is None  # IGNORE again
        old = await ref_of(client, "a")
        await client.terminate_child("a")
        handle = await client.restart_child("a")
        assert handle is not None and handle.ref is not None and handle.ref != old
        assert await states(client) == {"a": "running", "r": "restarting", "i": "stopped"}


async def test_delete_child_outcomes(system: ActorSystem, autojump_clock: MockClock) -> None:
    with trio.fail_after(100):
        _, client = await start_sup(system, [spec("a"), spec("r")], backoff=SLOW_RESTART)
        with pytest.raises(ChildRunning):
            await client.delete_child("a")
        await crash(client, "r")
        with pytest.raises(ChildRestarting):
            await client.delete_child("r")
        with pytest.raises(ChildNotFound):
            await client.delete_child("nope")
        await client.terminate_child("a")
        await client.delete_child("a")
        with pytest.raises(ChildNotFound):
            await client.get_childspec("a")
        assert await states(client) == {"r": "restarting"}
        await client.start_child(spec("a"))  # the id is free again
        assert (await states(client))["a"] == "running"


def test_admin_errors_are_distinct() -> None:
    kinds = [AlreadyStarted, AlreadyPresent, ChildRunning, ChildRestarting, ChildNotFound]
    for kind in kinds:
        assert [k for k in kinds if issubclass(kind, k)] == [kind]


async def test_which_children_and_count_children(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    specs = [
        spec("w1"),
        ChildSpec("s1", lambda: Supervisor([spec("x")]), type=ChildType.SUPERVISOR),
        spec("w2"),
        ChildSpec("i", ignore_factory),
    ]
    with trio.fail_after(100):
        _, client = await start_sup(system, specs, backoff=SLOW_RESTART)
        await crash(client, "w2")
        rows = await client.which_children()
        assert [(r.id, r.state, r.type, r.restarts) for r in rows] == [
            ("w1", "running", ChildType.WORKER, 0),
            ("s1", "running", ChildType.SUPERVISOR, 0),
            ("w2", "restarting", ChildType.WORKER, 0),
            ("i", "stopped", ChildType.WORKER, 0),
        ]
        assert rows[0].ref == await ref_of(client, "w1")
        assert rows[2].ref is None and rows[3].ref is None
        assert await client.count_children() == ChildCounts(
            specs=4, active=2, supervisors=1, workers=3
        )
        await trio.sleep(11)
        rows = await client.which_children()
        assert [(r.id, r.state, r.restarts) for r in rows][2] == ("w2", "running", 1)
        assert (await client.count_children()).active == 3


async def test_get_childspec_returns_the_spec(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    child = spec("a", shutdown=7, stash_capacity=3)
    with trio.fail_after(10):
        _, client = await start_sup(system, [child])
        assert await client.get_childspec("a") is child
        with pytest.raises(ChildNotFound):
            await client.get_childspec("b")


async def test_unknown_message_is_a_dead_letter_not_a_crash(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        sup, client = await start_sup(system, [spec("a")])
        await sup.cast("what is this")
        assert await states(client) == {"a": "running"}
        assert system.dead_letters.by_reason["supervisor does not handle this message"] == 1
        assert sup.is_alive
