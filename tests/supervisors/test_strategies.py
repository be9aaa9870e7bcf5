"""Restart strategies and restart types (stop order reverse, restart order forward)."""

from __future__ import annotations

import pytest
import trio
from trio.testing import MockClock

from actors import ActorSystem, ExitKind
from supervisors import ChildNotFound, Escalated, Restart, Strategy, gave_up

from .helpers import Log, crash, ref_of, spec, start_sup, states

ERROR, SHUTDOWN = ExitKind.ERROR, ExitKind.SHUTDOWN


async def test_one_for_one_restarts_only_the_failed_child(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec(c, log) for c in "abc"])
        before = {c: await ref_of(client, c) for c in "abc"}
        del log[:]
        await crash(client, "b")
        assert log == [("stop", "b", ERROR), ("start", "b")]
        after = {c: await ref_of(client, c) for c in "abc"}
        assert after["a"] == before["a"] and after["c"] == before["c"]
        assert after["b"] != before["b"]
        assert await after["b"].call("ping") == ("pong", "b", 1)


async def test_one_for_all_stops_others_in_reverse_and_restarts_all_in_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(
            system, [spec(c, log) for c in "abcd"], strategy=Strategy.ONE_FOR_ALL
        )
        del log[:]
        await crash(client, "b")
        assert log == [
            ("stop", "b", ERROR),
            ("stop", "d", SHUTDOWN),
            ("stop", "c", SHUTDOWN),
            ("stop", "a", SHUTDOWN),
            ("start", "a"),
            ("start", "b"),
            ("start", "c"),
            ("start", "d"),
        ]
        assert {c.id: c.restarts for c in await client.which_children()} == dict.fromkeys("abcd", 1)


async def test_rest_for_one_restarts_the_failed_child_and_later_ones(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(
            system, [spec(c, log) for c in "abcd"], strategy=Strategy.REST_FOR_ONE, intensity=2
        )
        a = await ref_of(client, "a")
        del log[:]
        await crash(client, "b")
        assert log == [
            ("stop", "b", ERROR),
            ("stop", "d", SHUTDOWN),
            ("stop", "c", SHUTDOWN),
            ("start", "b"),
            ("start", "c"),
            ("start", "d"),
        ]
        assert await ref_of(client, "a") == a
        del log[:]
        await crash(client, "d")  # the last child: nothing after it
        assert log == [("stop", "d", ERROR), ("start", "d")]


@pytest.mark.parametrize("strategy", [Strategy.ONE_FOR_ALL, Strategy.REST_FOR_ONE])
async def test_group_restart_counts_as_one_restart(
    system: ActorSystem, autojump_clock: MockClock, strategy: Strategy
) -> None:
    log: Log = []
    with trio.fail_after(10):
        sup, client = await start_sup(
            system, [spec(c, log) for c in "abcd"], strategy=strategy, intensity=1, period=5
        )
        with system.events.subscribe(1000) as sub:
            await crash(client, "a")  # four children restarted: still one restart
            assert sup.is_alive
            assert set((await states(client)).values()) == {"running"}
            await crash(client, "a", sync=False)  # a second restart within 5 s: over intensity 1
            reason = await sup.wait_exited()
            (escalated,) = [e for e in sub.drain() if isinstance(e, Escalated)]
    assert gave_up(reason)
    assert [cid for cid, _ in escalated.history] == ["a", "a"]


@pytest.mark.parametrize("strategy", [Strategy.ONE_FOR_ALL, Strategy.REST_FOR_ONE])
async def test_temporary_bystanders_are_stopped_and_never_restarted(
    system: ActorSystem, autojump_clock: MockClock, strategy: Strategy
) -> None:
    log: Log = []
    specs = [
        spec("a", log),
        spec("t", log, restart=Restart.TEMPORARY),
        spec("u", log, restart=Restart.TRANSIENT),
    ]
    with trio.fail_after(10):
        _, client = await start_sup(system, specs, strategy=strategy)
        del log[:]
        await crash(client, "a")
        assert log == [
            ("stop", "a", ERROR),
            ("stop", "u", SHUTDOWN),
            ("stop", "t", SHUTDOWN),
            ("start", "a"),
            ("start", "u"),  # a transient bystander is restarted
        ]
        assert await states(client) == {"a": "running", "u": "running"}
        with pytest.raises(ChildNotFound):
            await client.get_childspec("t")


async def test_one_for_all_restarts_a_terminated_sibling_too(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(
            system, [spec(c, log) for c in "ab"], strategy=Strategy.ONE_FOR_ALL
        )
        await client.terminate_child("b")
        del log[:]
        await crash(client, "a")
        assert log == [("stop", "a", ERROR), ("start", "a"), ("start", "b")]  # OTP's `tree` case
        assert await states(client) == {"a": "running", "b": "running"}


MATRIX = [
    (Restart.PERMANENT, "normal", True),
    (Restart.PERMANENT, "shutdown", True),
    (Restart.PERMANENT, "crash", True),
    (Restart.TRANSIENT, "normal", False),
    (Restart.TRANSIENT, "shutdown", False),
    (Restart.TRANSIENT, "crash", True),
    (Restart.TEMPORARY, "normal", False),
    (Restart.TEMPORARY, "shutdown", False),
    (Restart.TEMPORARY, "crash", False),
]


@pytest.mark.parametrize(("restart", "how", "restarted"), MATRIX)
async def test_restart_type_matrix(
    system: ActorSystem,
    autojump_clock: MockClock,
    restart: Restart,
    how: str,
    restarted: bool,
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("w", log, restart=restart), spec("x", log)])
        reason = await crash(client, "w", how)
        assert reason.kind is {"normal": ExitKind.NORMAL, "shutdown": SHUTDOWN, "crash": ERROR}[how]
        rows = {c.id: (c.state, c.restarts) for c in await client.which_children()}
        if restarted:
            assert rows["w"] == ("running", 1)
            assert log[-1] == ("start", "w")
        elif restart is Restart.TEMPORARY:
            assert "w" not in rows  # its spec is forgotten
        else:
            assert rows["w"] == ("stopped", 0)  # spec kept, not running
        assert rows["x"] == ("running", 0)


@pytest.mark.parametrize("strategy", [Strategy.ONE_FOR_ALL, Strategy.REST_FOR_ONE])
async def test_exit_that_is_not_restarted_leaves_siblings_alone(
    system: ActorSystem, autojump_clock: MockClock, strategy: Strategy
) -> None:
    log: Log = []
    specs = [
        spec("t", log, restart=Restart.TEMPORARY),
        spec("u", log, restart=Restart.TRANSIENT),
        spec("c", log),
    ]
    with trio.fail_after(10):
        _, client = await start_sup(system, specs, strategy=strategy)
        del log[:]
        await crash(client, "t")  # temporary: never restarted, so no group restart
        await crash(client, "u", "normal")  # transient, normal exit: the same
        assert log == [("stop", "t", ERROR), ("stop", "u", ExitKind.NORMAL)]
        assert await states(client) == {"u": "stopped", "c": "running"}
