"""Timers: send_after, send_interval, cancelling, dying with the actor, bad delays."""

from __future__ import annotations

import math
from typing import Any

import pytest
import trio
import trio.testing
from trio.testing import MockClock

from actors import Actor, ActorSystem, ExitKind, Timer

# == actors ==========================================================================


class Clocked(Actor):
    """Sets timers on command and records (message, trio time) of what they deliver.

    ("after", delay, msg) and ("every", period, msg) return the Timer; ("cancel", msg)
    cancels it; ("busy", seconds) keeps the actor busy; ("crash",) raises.
    """

    def __init__(self) -> None:
        self.got: list[tuple[Any, float]] = []
        self.timers: dict[Any, Timer] = {}

    async def receive(self, message: Any) -> Any:
        match message:
            case ("after", delay, msg):
                self.timers[msg] = self.ctx.send_after(delay, msg)
                return self.timers[msg]
            case ("every", period, msg):
                self.timers[msg] = self.ctx.send_interval(period, msg)
                return self.timers[msg]
            case ("cancel", msg):
                self.timers[msg].cancel()
            case ("busy", seconds):
                await trio.sleep(seconds)
            case ("crash",):
                raise RuntimeError("crash on request")
            case _:
                self.got.append((message, trio.current_time()))
        return None


class StartsTicking(Clocked):
    async def on_start(self) -> None:
        self.started = trio.current_time()
        self.ctx.send_interval(0.5, "tick")


class BadTimer(Actor):
    """Tries to set the timer described by the message; returns the error, if any."""

    async def receive(self, message: Any) -> Any:
        kind, delay = message
        try:
            if kind == "after":
                self.ctx.send_after(delay, "never")
            else:
                self.ctx.send_interval(delay, "never")
        except ValueError as exc:
            return exc
        return None


# == helpers =========================================================================


def relative(got: list[tuple[Any, float]], start: float) -> list[tuple[Any, float]]:
    """Messages with their delivery time relative to ``start``, rounded to 1 ms."""
    return [(m, round(t - start, 3)) for m, t in got]


# == send_after ======================================================================


async def test_send_after_delivers_once_at_the_exact_time(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    start = trio.current_time()
    await ref.call(("after", 1.5, "ping"))
    await trio.sleep(1.4)
    assert actor.got == []
    await trio.sleep(10)
    assert relative(actor.got, start) == [("ping", 1.5)]


async def test_send_after_timers_fire_in_deadline_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    start = trio.current_time()
    await ref.call(("after", 3, "c"))
    await ref.call(("after", 1, "a"))
    await ref.call(("after", 2, "b"))
    await ref.call(("after", 2, "b2"))  # same deadline: scheduling order
    await trio.sleep(5)
    assert relative(actor.got, start) == [("a", 1), ("b", 2), ("b2", 2), ("c", 3)]


async def test_send_after_zero_delivers_without_waiting(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    start = trio.current_time()
    await ref.call(("after", 0, "now"))
    await trio.testing.wait_all_tasks_blocked()
    assert actor.got == [("now", start)]


async def test_timer_waits_behind_a_busy_handler(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    start = trio.current_time()
    await ref.call(("after", 1, "ping"))
    await ref.cast(("busy", 2.5))
    await trio.sleep(5)
    assert relative(actor.got, start) == [("ping", 2.5)]


# == send_interval ===================================================================


async def test_send_interval_fires_every_period(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    start = trio.current_time()
    await ref.call(("every", 1.0, "tick"))
    await trio.sleep(3.5)
    assert relative(actor.got, start) == [("tick", 1), ("tick", 2), ("tick", 3)]
    await trio.sleep(1)
    assert relative(actor.got, start)[-1] == ("tick", 4)


async def test_interval_set_in_on_start(system: ActorSystem, autojump_clock: MockClock) -> None:
    actor = StartsTicking()
    await system.spawn(actor)
    await trio.sleep(1.75)
    assert relative(actor.got, actor.started) == [("tick", 0.5), ("tick", 1.0), ("tick", 1.5)]


async def test_two_intervals_interleave(system: ActorSystem, autojump_clock: MockClock) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    start = trio.current_time()
    await ref.call(("every", 2, "slow"))
    await ref.call(("every", 0.75, "fast"))
    await trio.sleep(4.6)
    assert relative(actor.got, start) == [
        ("fast", 0.75),
        ("fast", 1.5),
        ("slow", 2),
        ("fast", 2.25),
        ("fast", 3.0),
        ("fast", 3.75),
        ("slow", 4),
        ("fast", 4.5),
    ]


async def test_interval_skips_periods_missed_while_busy(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    start = trio.current_time()
    await ref.call(("every", 1, "tick"))
    await ref.cast(("busy", 3.5))
    await trio.sleep(6)
    # One late tick when the handler ends (not a burst of three), then every period again.
    assert relative(actor.got, start) == [("tick", 3.5), ("tick", 4.5), ("tick", 5.5)]


# == cancelling ======================================================================


async def test_cancelled_send_after_never_fires(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    await ref.call(("after", 1, "ping"))
    await ref.call(("after", 2, "pong"))
    await ref.call(("cancel", "ping"))
    start = trio.current_time()
    await trio.sleep(5)
    assert [m for m, _ in actor.got] == ["pong"]
    assert actor.timers["ping"].cancelled
    assert system.dead_letters.total == 0
    assert start < actor.got[0][1]


async def test_cancelling_an_interval_stops_further_ticks(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    start = trio.current_time()
    await ref.call(("every", 1, "tick"))
    await trio.sleep(2.5)
    await ref.call(("cancel", "tick"))
    await trio.sleep(10)
    assert relative(actor.got, start) == [("tick", 1), ("tick", 2)]


async def test_timer_cancelled_from_outside_the_actor(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    timer = await ref.call(("after", 1, "ping"))
    assert isinstance(timer, Timer)
    timer.cancel()
    await trio.sleep(5)
    assert actor.got == []
    assert ref.is_alive


async def test_cancelling_twice_is_harmless(system: ActorSystem, autojump_clock: MockClock) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    timer = await ref.call(("every", 1, "tick"))
    timer.cancel()
    timer.cancel()
    await trio.sleep(3)
    assert actor.got == []
    assert await ref.call("sync") is None
    assert [m for m, _ in actor.got] == ["sync"]


# == timers die with the actor =======================================================


@pytest.mark.parametrize("how", ["stop", "kill", "crash"])
async def test_timers_die_with_the_actor(
    system: ActorSystem, autojump_clock: MockClock, how: str
) -> None:
    actor = Clocked()
    ref = await system.spawn(actor)
    start = trio.current_time()
    once = await ref.call(("after", 2, "once"))
    await ref.call(("every", 1, "tick"))
    await trio.sleep(1.5)
    if how == "stop":
        reason = await ref.stop()
    elif how == "kill":
        reason = await ref.kill()
    else:
        await ref.cast(("crash",))
        with trio.fail_after(60):
            reason = await ref.wait_exited()
    kinds = {"stop": ExitKind.SHUTDOWN, "kill": ExitKind.CANCELLED, "crash": ExitKind.ERROR}
    assert reason.kind is kinds[how]
    await trio.sleep(10)
    assert relative(actor.got, start) == [("tick", 1)]  # nothing after the exit
    assert system.dead_letters.total == 0  # no refused timer message either
    once.cancel()  # cancelling a dead actor's timer is harmless
    assert ref.exit_reason is reason


# == invalid delays ==================================================================


@pytest.mark.parametrize("delay", [-1, -0.001, math.inf, math.nan])
async def test_send_after_rejects_bad_delays(
    system: ActorSystem, autojump_clock: MockClock, delay: float
) -> None:
    ref = await system.spawn(BadTimer())
    error = await ref.call(("after", delay))
    assert isinstance(error, ValueError)
    assert "timer delay must be a finite number >= 0" in str(error)
    assert ref.is_alive


@pytest.mark.parametrize(
    ("period", "text"),
    [
        (0, "timer period must be > 0"),
        (-1, "timer period must be > 0"),
        (math.nan, "timer period must be > 0"),
        (math.inf, "timer delay must be a finite number"),
    ],
)
async def test_send_interval_rejects_bad_periods(
    system: ActorSystem, autojump_clock: MockClock, period: float, text: str
) -> None:
    ref = await system.spawn(BadTimer())
    error = await ref.call(("every", period))
    assert isinstance(error, ValueError)
    assert text in str(error)
    assert ref.is_alive
