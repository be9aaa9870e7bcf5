"""Liveness: heartbeats, probes and ``Stale`` notices (all on the autojump clock)."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from actors import Actor, ActorRef, ActorSystem, LivenessSpec, Stale

SPEC = LivenessSpec(interval=1, allowed_misses=2)  # stale after 3 s without a heartbeat


class Watcher(Actor):
    """Watches liveness on request and records (arrival time, Stale) pairs."""

    def __init__(self) -> None:
        self.stales: list[tuple[float, Stale]] = []

    async def receive(self, message: Any) -> Any:
        match message:
            case Stale():
                self.stales.append((trio.current_time(), message))
            case ("watch", target, spec):
                self.ctx.watch_liveness(target, spec)
            case ("unwatch", target):
                self.ctx.unwatch_liveness(target)
            case "stales":
                return list(self.stales)
        return None


class Worker(Actor):
    """Idle unless told to work; can beat while it works."""

    async def receive(self, message: Any) -> Any:
        match message:
            case ("work", seconds, activity):
                if activity is not None:
                    self.ctx.beat(activity)
                await trio.sleep(seconds)
            case ("beating", seconds, every, activity, then_silent):
                end = trio.current_time() + seconds
                while trio.current_time() < end:
                    self.ctx.beat(activity)
                    await trio.sleep(every)
                await trio.sleep(then_silent)
            case _:
                return message
        return None


def node(system: ActorSystem, ref: ActorRef) -> dict[str, Any]:
    """The snapshot entry of a top-level actor."""
    [entry] = [c for c in system.snapshot()["children"] if c["path"] == ref.path]
    return entry


async def test_idle_watched_actor_stays_fresh_because_it_answers_probes(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    watcher = await system.spawn(Watcher(), name="watcher")
    watched = await system.spawn(Worker(), name="watched")
    unwatched = await system.spawn(Worker(), name="unwatched")
    await watcher.call(("watch", watched, SPEC))
    for _ in range(6):
        await trio.sleep(10.5)
        # Each probe (one per interval) refreshes the heartbeat of the idle actor.
        assert node(system, watched)["heartbeat_age"] <= 1.0
    assert await watcher.call("stales") == []
    # Without probes an idle actor's heartbeat just ages.
    assert node(system, unwatched)["heartbeat_age"] >= 60


async def test_busy_actor_without_beats_is_reported_stale_once(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    watcher = await system.spawn(Watcher(), name="watcher")
    worker = await system.spawn(Worker(), name="worker")
    await worker.cast(("work", 60, "crunching numbers"))  # one beat, then silence
    t0 = trio.current_time()
    await watcher.call(("watch", worker, SPEC))
    await trio.sleep(30)
    stales = await watcher.call("stales")
    assert len(stales) == 1
    at, stale = stales[0]
    assert stale.actor == worker
    assert 3 < stale.heartbeat_age <= 5
    assert stale.last_activity == "crunching numbers"
    assert 3 < at - t0 <= 5
    assert worker.is_alive  # the watcher only learns of it; it decides what to do


async def test_busy_actor_that_beats_stays_fresh_and_shows_its_activity(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    watcher = await system.spawn(Watcher(), name="watcher")
    worker = await system.spawn(Worker(), name="worker")
    t0 = trio.current_time()
    # Beat every 0.5 s for 20 s, then go silent for 30 s.
    await worker.cast(("beating", 20, 0.5, "doing x", 30))
    await watcher.call(("watch", worker, SPEC))
    await trio.sleep(15)
    assert await watcher.call("stales") == []
    entry = node(system, worker)
    assert entry["last_activity"] == "doing x"
    assert entry["heartbeat_age"] <= 0.5
    await trio.sleep(20)
    [(at, stale)] = await watcher.call("stales")
    assert stale.last_activity == "doing x"
    assert 3 < stale.heartbeat_age <= 5
    assert 22.5 < at - t0 <= 25


async def test_unwatch_liveness_stops_reports(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    watcher = await system.spawn(Watcher(), name="watcher")
    worker = await system.spawn(Worker(), name="worker")
    await worker.cast(("work", 60, None))
    await watcher.call(("watch", worker, SPEC))
    await trio.sleep(1.5)
    await watcher.call(("unwatch", worker))
    await trio.sleep(30)
    assert await watcher.call("stales") == []


async def test_watching_an_actor_that_exits_reports_nothing(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    watcher = await system.spawn(Watcher(), name="watcher")
    worker = await system.spawn(Worker(), name="worker")
    await watcher.call(("watch", worker, SPEC))
    await trio.sleep(1.5)
    await worker.stop()
    await trio.sleep(30)
    assert await watcher.call("stales") == []


def test_liveness_spec_stale_after() -> None:
    assert SPEC.stale_after == 3
    assert not SPEC.is_stale(3.0)
    assert SPEC.is_stale(3.01)
    assert LivenessSpec(interval=0.5).allowed_misses == 2
    assert LivenessSpec(interval=0.5, allowed_misses=0).stale_after == 0.5


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"interval": 0}, "interval"),
        ({"interval": -1}, "interval"),
        ({"interval": True}, "interval"),
        ({"interval": "1"}, "interval"),
        ({"interval": 1, "allowed_misses": -1}, "allowed_misses"),
        ({"interval": 1, "allowed_misses": 1.5}, "allowed_misses"),
        ({"interval": 1, "allowed_misses": True}, "allowed_misses"),
    ],
)
def test_liveness_spec_rejects_invalid_values(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"liveness {field} must be"):
        LivenessSpec(**kwargs)
