"""Unkillable actors: reported on time, detached from their owner, finished later."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    ExitKind,
    ExitReason,
    Subscription,
    UnkillableFinished,
    UnkillableReported,
)
from actors._teardown import KILL_MARGIN

from .test_lifecycle import next_event

# -- unkillable actors ----------------------------------------------------------------


class ShieldedWorker(Actor):
    """Handles one message inside a shielded scope until ``release`` is set."""

    shutdown_budget = 1.0

    def __init__(self, release: trio.Event) -> None:
        self.release = release
        self.entered = trio.Event()

    async def receive(self, message: Any) -> Any:
        self.entered.set()
        with trio.CancelScope(shield=True):
            await self.release.wait()
        return message


class ThreadWorker(Actor):
    """Handles one message in a non-abandoning worker thread until ``release`` is set."""

    shutdown_budget = 0.2

    def __init__(self, release: threading.Event) -> None:
        self.release = release
        self.entered = trio.Event()

    async def receive(self, message: Any) -> Any:
        self.entered.set()
        await trio.to_thread.run_sync(self.release.wait)
        return message


async def _check_reported_unkillable(
    system: ActorSystem, sub: Subscription, ref: ActorRef, reason: ExitReason
) -> None:
    assert reason.kind is ExitKind.UNKILLABLE
    assert ref.path in reason.detail
    assert ref.is_alive
    reported = [e for e in sub.drain() if isinstance(e, UnkillableReported)]
    assert [e.path for e in reported] == [ref.path]
    assert system.unkillable() == [ref]
    snap = system.snapshot()
    [entry] = snap["unkillable"]
    assert entry["path"] == ref.path
    assert entry["state"] == "unkillable"
    # Detached from the tree so a replacement can take its name; listed apart.
    assert [c for c in snap["children"] if c["path"] == ref.path] == []


async def test_shielded_actor_is_reported_unkillable_and_stop_returns_on_time(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    release = trio.Event()
    actor = ShieldedWorker(release)
    with system.events.subscribe() as sub:
        ref = await system.spawn(actor, name="stuck")
        try:
            await ref.cast("work")
            await actor.entered.wait()
            t0 = trio.current_time()
            reason = await ref.stop()
            # Budget (1 s), then the kill grace plus the unkillable margin, no more.
            grace = system.kill_grace * (1 + KILL_MARGIN)
            assert trio.current_time() - t0 == pytest.approx(1.0 + grace)
            await _check_reported_unkillable(system, sub, ref, reason)
        finally:
            release.set()
        with trio.fail_after(5):
            finished = await next_event(sub, UnkillableFinished)
        assert finished.path == "/stuck"
        assert not ref.is_alive
        assert system.unkillable() == []


async def test_thread_blocked_actor_is_reported_unkillable_and_stop_returns_on_time(
    system: ActorSystem,
) -> None:
    # Real clock: a real worker thread is involved.
    release = threading.Event()
    actor = ThreadWorker(release)
    with system.events.subscribe() as sub:
        ref = await system.spawn(actor, name="stuck-thread")
        try:
            await ref.cast("work")
            with trio.fail_after(5):
                await actor.entered.wait()
            t0 = trio.current_time()
            with trio.fail_after(10):
                reason = await ref.stop()
            elapsed = trio.current_time() - t0
            assert 0.2 + system.kill_grace - 0.05 <= elapsed < 0.2 + system.kill_grace + 1.0
            await _check_reported_unkillable(system, sub, ref, reason)
        finally:
            release.set()
        with trio.fail_after(5):
            finished = await next_event(sub, UnkillableFinished)
        assert finished.path == "/stuck-thread"
        assert not ref.is_alive
        assert system.unkillable() == []


class StuckChildParent(Actor):
    """Owns one ShieldedWorker child, spawned with ``child_budget``."""

    def __init__(self, release: trio.Event, child_budget: float, hook_time: float = 0) -> None:
        self.worker = ShieldedWorker(release)
        self.child_budget = child_budget
        self.hook_time = hook_time
        self.stops: list[ExitReason] = []

    async def on_start(self) -> None:
        self.child = await self.ctx.spawn(self.worker, name="worker", shutdown=self.child_budget)

    async def on_stop(self, reason: ExitReason) -> None:
        self.stops.append(reason)
        await trio.sleep(self.hook_time)


async def test_parent_of_unkillable_child_stops_on_time(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    release = trio.Event()
    parent = StuckChildParent(release, child_budget=1.0)
    with system.events.subscribe() as sub:
        ref = await system.spawn(parent, name="owner")
        try:
            await parent.child.cast("work")
            await parent.worker.entered.wait()
            t0 = trio.current_time()
            reason = await ref.stop()
            grace = system.kill_grace * (1 + KILL_MARGIN)
            assert trio.current_time() - t0 == pytest.approx(1.0 + grace)
            assert reason.kind is ExitKind.SHUTDOWN
            assert parent.stops == [reason]
            assert system.unkillable() == [parent.child]
            reported = [e.path for e in sub.drain() if isinstance(e, UnkillableReported)]
            assert reported == ["/owner/worker"]
        finally:
            release.set()
        with trio.fail_after(5):
            finished = await next_event(sub, UnkillableFinished)
        assert finished.path == "/owner/worker"


async def test_parent_of_unkillable_child_is_not_itself_reported_unkillable(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    # Default-like budgets: parent 5 s, child 5 s. The parent's stop hook is quick (0.1 s).
    release = trio.Event()
    parent = StuckChildParent(release, child_budget=5.0, hook_time=0.1)
    with system.events.subscribe() as sub:
        ref = await system.spawn(parent, name="owner", shutdown=5.0)
        try:
            await parent.child.cast("work")
            await parent.worker.entered.wait()
            reason = await ref.stop()
            reported = [e.path for e in sub.drain() if isinstance(e, UnkillableReported)]
            assert reported == ["/owner/worker"]
            assert reason.kind is not ExitKind.UNKILLABLE
        finally:
            release.set()
            with trio.fail_after(5):
                await parent.child.wait_exited()


async def test_actor_killed_after_its_stop_deadline_does_not_exit_as_shutdown(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    release = trio.Event()
    actor = ShieldedWorker(release)
    with system.events.subscribe() as sub:
        ref = await system.spawn(actor)
        try:
            await ref.cast("work")
            await actor.entered.wait()
            assert (await ref.stop()).kind is ExitKind.UNKILLABLE
        finally:
            release.set()
        with trio.fail_after(5):
            finished = await next_event(sub, UnkillableFinished)
    # It was cancelled for overrunning its budget: 'shutdown' ("stop hook finished in
    # time") is wrong; 'killed' is what the docs promise.
    assert finished.reason.kind is ExitKind.KILLED
    assert ref.exit_reason is not None
    assert ref.exit_reason.kind is ExitKind.KILLED
