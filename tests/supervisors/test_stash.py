"""Messages sent through a ChildHandle while the child restarts: stashed, replayed in order."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from trio.testing import MockClock

from actors import ActorExited, ActorSystem, CallTimeout, DeadLetter, ExitKind
from supervisors import Backoff, ChildSpec, ChildState, Restart, Strategy

from .helpers import Log, Worker, crash, of_type, ref_of, spec, start_sup

FLAT = Backoff(min=2, max=2, random_factor=0)


def got(log: Log) -> list[tuple[int, object]]:
    """(incarnation, item) of every ("got", item) message handled."""
    return [(e[2], e[3]) for e in log if e[0] == "got"]


async def test_casts_during_restart_reach_the_new_instance_in_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("w", log)], backoff=FLAT)
        handle = await client.child("w")
        await crash(client, "w")
        assert handle.state is ChildState.RESTARTING
        for i in range(5):
            assert await handle.cast(("got", i))
        assert handle.stash_depth == 5
        assert got(log) == []
        assert await handle.call(("got", "after"), timeout=10) == "after"
    assert got(log) == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, "after")]
    assert handle.stash_depth == 0
    assert handle.stashed_total == 5


async def test_cast_before_supervisor_noticed_the_crash_is_stashed(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    slow = spec("slow", log, {"stop_delay": 5})
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("w", log), slow])
        handle = await client.child("w")
        old = await ref_of(client, "w")
        async with trio.open_nursery() as nursery:
            # Keep the supervisor busy for 5 s stopping "slow".
            nursery.start_soon(client.terminate_child, "slow")
            await trio.sleep(1)
            await old.cast("crash")
            await old.wait_exited()
            # The supervisor has not handled the Exit yet: the handle still says running.
            assert handle.state is ChildState.RUNNING
            assert await handle.cast(("got", "early"))
            assert handle.stash_depth == 1
            # A call waits for the supervisor's decision (a restart), then goes through,
            # after the stash has been replayed.
            assert await handle.call(("got", "waited"), timeout=10) == "waited"
        assert await handle.call(("got", "late")) == "late"
    assert got(log) == [(1, "early"), (1, "waited"), (1, "late")]


async def test_stash_overflow_becomes_counted_dead_letters(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10), system.events.subscribe(1000) as sub:
        _, client = await start_sup(system, [spec("w", log, stash_capacity=2)], backoff=FLAT)
        handle = await client.child("w")
        await crash(client, "w")
        before = system.dead_letters.by_reason["stash full during restart"]
        results = [await handle.cast(("got", i)) for i in range(5)]
        assert results == [True, True, False, False, False]
        assert system.dead_letters.by_reason["stash full during restart"] - before == 3
        letters = [
            d for d in of_type(sub.drain(), DeadLetter) if d.reason == "stash full during restart"
        ]
        assert [(d.recipient, d.message) for d in letters] == [
            ("/sup/w", ("got", 2)),
            ("/sup/w", ("got", 3)),
            ("/sup/w", ("got", 4)),
        ]
        await trio.sleep(3)
    assert got(log) == [(1, 0), (1, 1)]


async def test_call_through_handle_waits_for_the_restart(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("w", log)], backoff=FLAT)
        handle = await client.child("w")
        await crash(client, "w")
        start = trio.current_time()
        assert await handle.call(("got", "x"), timeout=5) == "x"
        assert trio.current_time() - start == pytest.approx(2.0)
    assert got(log) == [(1, "x")]


async def test_call_through_handle_times_out_if_restart_takes_longer(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("w")], backoff=FLAT)
        handle = await client.child("w")
        await crash(client, "w")
        start = trio.current_time()
        with pytest.raises(CallTimeout):
            await handle.call("ping", timeout=0.5)
        assert trio.current_time() - start == pytest.approx(0.5)


async def test_stash_becomes_dead_letters_when_the_restart_is_abandoned(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("w", log)], backoff=FLAT)
        handle = await client.child("w")
        await crash(client, "w")
        await handle.cast(("got", 1))
        await handle.cast(("got", 2))
        await client.terminate_child("w")  # ends the pending restart
        assert handle.state is ChildState.STOPPED
        assert system.dead_letters.by_reason["child stopped while stashed"] == 2
        await trio.sleep(5)
    assert got(log) == []


async def test_handle_of_a_child_that_will_not_come_back(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("w", restart=Restart.TRANSIENT)])
        handle = await client.child("w")
        await crash(client, "w", "normal")
        assert handle.state is ChildState.STOPPED
        assert handle.ref is None
        assert not await handle.cast("ping")
        assert system.dead_letters.by_reason["child not running"] == 1
        with pytest.raises(ActorExited) as info:
            await handle.call("ping")
        assert info.value.reason.kind is ExitKind.NOPROC


async def test_bystanders_of_a_group_restart_stash_too(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(
            system, [spec("a", log), spec("b", log)], strategy=Strategy.ONE_FOR_ALL, backoff=FLAT
        )
        b = await client.child("b")
        await crash(client, "a")
        assert b.state is ChildState.RESTARTING
        await b.cast(("got", "queued"))
        assert await b.call(("got", "next"), timeout=5) == "next"
    assert got(log) == [(1, "queued"), (1, "next")]


async def test_cast_racing_with_the_end_of_a_restart_reaches_the_new_instance(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    state: dict[str, Any] = {}
    rounds = 20  # each round races with the restart (the scheduler's order is random)
    with trio.fail_after(100):
        async with trio.open_nursery() as nursery:

            def factory() -> Worker:
                handle = state.get("handle")
                if handle is not None:  # a restart: a client casts while it completes
                    nursery.start_soon(handle.cast, ("got", state["round"]))
                return Worker("w", log)

            _, client = await start_sup(system, [ChildSpec("w", factory)], intensity=1000, period=1)
            handle = state["handle"] = await client.child("w")
            for n in range(rounds):
                state["round"] = n
                await crash(client, "w")
                await trio.sleep(0.1)
                assert handle.stash_depth == 0
    assert got(log) == [(n + 1, n) for n in range(rounds)]


async def test_caller_waiting_for_a_restart_is_told_when_the_supervisor_stops(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    errors: list[ActorExited] = []
    with trio.fail_after(10):
        sup, client = await start_sup(system, [spec("w")], backoff=FLAT)
        handle = await client.child("w")
        await crash(client, "w")

        async def call() -> None:
            with pytest.raises(ActorExited) as info:
                await handle.call("ping", timeout=5)
            errors.append(info.value)

        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            await trio.sleep(0.5)
            await sup.stop()
    assert trio.current_time() - start == pytest.approx(0.5)  # not left waiting for 5 s
    assert [e.reason.kind for e in errors] == [ExitKind.NOPROC]


async def test_call_queued_behind_a_crash_goes_to_the_next_incarnation(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("w", log)])
        handle = await client.child("w")
        old = await ref_of(client, "w")
        await old.cast("crash")  # queued first: the call below waits behind it
        assert await handle.call(("got", "queued")) == "queued"
    assert got(log) == [(1, "queued")]  # handled once, by the restarted incarnation


async def test_call_whose_handler_crashes_is_not_sent_again(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    log: Log = []
    with trio.fail_after(10):
        _, client = await start_sup(system, [spec("w", log)])
        handle = await client.child("w")
        with pytest.raises(ActorExited) as caught:
            await handle.call("crash")
        assert caught.value.handled is True
        assert caught.value.reason.kind is ExitKind.ERROR
        # The child came back, but the crashing call was not replayed to it.
        assert await handle.call("ping") == ("pong", "w", 1)
    assert [e for e in log if e[0] == "start"] == [("start", "w"), ("start", "w")]
