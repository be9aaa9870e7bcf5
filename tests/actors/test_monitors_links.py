"""Monitors (one ``Down`` per monitor) and links (two-way exit propagation or ``Exit``)."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    Down,
    Exit,
    ExitKind,
    ExitReason,
    MonitorRef,
)


class Peer(Actor):
    """Monitors, links and records the notices it receives; the test drives it by calls."""

    shutdown_budget = 1.0

    def __init__(self, trap: bool = False, slow_stop: bool = False) -> None:
        self.trap_exits = trap
        self.slow_stop = slow_stop
        self.notices: list[Any] = []

    async def receive(self, message: Any) -> Any:
        match message:
            case Down() | Exit():
                self.notices.append(message)
            case "notices":
                return list(self.notices)
            case "boom":
                raise RuntimeError(f"{self.ctx.path} crashed on purpose")
            case "stop-self":
                self.ctx.stop()
            case ("monitor", target):
                return self.ctx.monitor(target)
            case ("demonitor", mref):
                self.ctx.demonitor(mref)
            case ("link", target):
                self.ctx.link(target)
            case ("unlink", target):
                self.ctx.unlink(target)
            case ("monitor-two-flush-second", first, second):
                # Both Downs are queued (we are busy); flushing one keeps the other.
                m1, m2 = self.ctx.monitor(first), self.ctx.monitor(second)
                await first.stop()
                await second.stop()
                self.ctx.demonitor(m2, flush=True)
                return m1
            case ("monitor-stop-demonitor", target, flush):
                # The Down is queued (we are busy) before demonitor runs.
                mref = self.ctx.monitor(target)
                await target.stop()
                self.ctx.demonitor(mref, flush=flush)
                return mref
            case _:
                return message
        return None

    async def on_stop(self, reason: ExitReason) -> None:
        if self.slow_stop:
            await trio.sleep(1000)


async def end_with(kind: ExitKind, ref: ActorRef) -> ExitReason:
    """Make ``ref`` exit with a reason of ``kind`` and return that reason."""
    if kind is ExitKind.NORMAL:
        await ref.call("stop-self")
        reason = await ref.wait_exited()
    elif kind is ExitKind.ERROR:
        await ref.cast("boom")
        reason = await ref.wait_exited()
    elif kind is ExitKind.KILLED:
        reason = await ref.stop()  # its stop hook overruns the 1 s budget
    elif kind is ExitKind.CANCELLED:
        reason = await ref.kill()
    else:
        raise AssertionError(kind)
    assert reason.kind is kind
    return reason


# -- monitors -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [ExitKind.NORMAL, ExitKind.ERROR, ExitKind.KILLED])
async def test_monitor_delivers_exactly_one_down_with_the_reason(
    system: ActorSystem, autojump_clock: trio.testing.MockClock, kind: ExitKind
) -> None:
    watcher = await system.spawn(Peer(), name="watcher")
    target = await system.spawn(Peer(slow_stop=kind is ExitKind.KILLED), name="target")
    mref = await watcher.call(("monitor", target))
    assert isinstance(mref, MonitorRef)
    reason = await end_with(kind, target)
    await trio.sleep(5)
    notices = await watcher.call("notices")
    assert notices == [Down(mref, target, reason)]
    assert notices[0].monitor is mref
    assert notices[0].reason.kind is kind
    assert watcher.is_alive


async def test_monitoring_a_dead_actor_gives_noproc_down(system: ActorSystem) -> None:
    watcher = await system.spawn(Peer(), name="watcher")
    target = await system.spawn(Peer(), name="target")
    await target.stop()
    mref = await watcher.call(("monitor", target))
    [down] = await watcher.call("notices")
    assert down.monitor is mref
    assert down.actor == target
    assert down.reason.kind is ExitKind.NOPROC
    assert "/target" in down.reason.detail


async def test_demonitor_removes_the_monitor(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    watcher = await system.spawn(Peer(), name="watcher")
    target = await system.spawn(Peer(), name="target")
    mref = await watcher.call(("monitor", target))
    await watcher.call(("demonitor", mref))
    await target.cast("boom")
    await target.wait_exited()
    await trio.sleep(1)
    assert await watcher.call("notices") == []


@pytest.mark.parametrize("flush", [True, False])
async def test_demonitor_flush_drops_an_already_queued_down(
    system: ActorSystem, flush: bool
) -> None:
    watcher = await system.spawn(Peer(), name="watcher")
    target = await system.spawn(Peer(), name="target")
    mref = await watcher.call(("monitor-stop-demonitor", target, flush))
    assert not target.is_alive
    notices = await watcher.call("notices")
    if flush:
        assert notices == []
    else:
        # Without flush the Down queued before demonitor is still delivered.
        assert notices == [Down(mref, target, target.exit_reason)]


async def test_demonitor_flush_drops_only_its_own_down(system: ActorSystem) -> None:
    watcher = await system.spawn(Peer(), name="watcher")
    first = await system.spawn(Peer(), name="first")
    second = await system.spawn(Peer(), name="second")
    kept = await watcher.call(("monitor-two-flush-second", first, second))
    assert await watcher.call("notices") == [Down(kept, first, first.exit_reason)]


async def test_each_of_several_monitors_gets_one_down(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    first = await system.spawn(Peer(), name="first")
    second = await system.spawn(Peer(), name="second")
    target = await system.spawn(Peer(), name="target")
    m1 = await first.call(("monitor", target))
    m2 = await first.call(("monitor", target))
    m3 = await second.call(("monitor", target))
    assert len({m1.id, m2.id, m3.id}) == 3
    reason = await end_with(ExitKind.ERROR, target)
    await trio.sleep(1)
    first_notices = await first.call("notices")
    assert [d.monitor for d in first_notices] == [m1, m2]
    assert all(d.reason == reason for d in first_notices)
    assert await second.call("notices") == [Down(m3, target, reason)]


# -- links ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [ExitKind.ERROR, ExitKind.CANCELLED, ExitKind.KILLED])
@pytest.mark.parametrize("who_dies", ["linker", "linked"])
async def test_abnormal_exit_stops_the_linked_peer_both_ways(
    system: ActorSystem,
    autojump_clock: trio.testing.MockClock,
    kind: ExitKind,
    who_dies: str,
) -> None:
    slow = kind is ExitKind.KILLED
    linker = await system.spawn(Peer(slow_stop=slow and who_dies == "linker"), name="linker")
    linked = await system.spawn(Peer(slow_stop=slow and who_dies == "linked"), name="linked")
    await linker.call(("link", linked))
    dying, peer = (linker, linked) if who_dies == "linker" else (linked, linker)
    reason = await end_with(kind, dying)
    with trio.fail_after(5):
        peer_reason = await peer.wait_exited()
    assert peer_reason.kind is kind
    assert peer_reason.cause is reason
    assert dying.path in peer_reason.detail


async def test_normal_exit_does_not_propagate_over_a_link(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    linker = await system.spawn(Peer(), name="linker")
    linked = await system.spawn(Peer(), name="linked")
    await linker.call(("link", linked))
    await end_with(ExitKind.NORMAL, linked)
    await trio.sleep(5)
    assert linker.is_alive
    assert await linker.call("notices") == []


@pytest.mark.parametrize("kind", [ExitKind.NORMAL, ExitKind.ERROR, ExitKind.CANCELLED])
async def test_trapping_peer_receives_exit_instead_of_dying(
    system: ActorSystem, autojump_clock: trio.testing.MockClock, kind: ExitKind
) -> None:
    trapper = await system.spawn(Peer(trap=True), name="trapper")
    other = await system.spawn(Peer(), name="other")
    await trapper.call(("link", other))
    reason = await end_with(kind, other)
    await trio.sleep(1)
    assert trapper.is_alive
    assert await trapper.call("notices") == [Exit(other, reason)]


async def test_trapping_is_per_side_of_a_link(
    system: ActorSystem, autojump_clock: trio.testing.MockClock
) -> None:
    # The trapping side gets Exit; the non-trapping side of the same link dies.
    trapper = await system.spawn(Peer(trap=True), name="trapper")
    plain = await system.spawn(Peer(), name="plain")
    await plain.call(("link", trapper))
    reason = await end_with(ExitKind.ERROR, trapper)
    plain_reason = await plain.wait_exited()
    assert plain_reason.kind is ExitKind.ERROR
    assert plain_reason.cause is reason


@pytest.mark.parametrize("who_dies", ["linker", "linked"])
async def test_unlink_removes_propagation_both_ways(
    system: ActorSystem, autojump_clock: trio.testing.MockClock, who_dies: str
) -> None:
    linker = await system.spawn(Peer(), name="linker")
    linked = await system.spawn(Peer(), name="linked")
    await linker.call(("link", linked))
    await linker.call(("unlink", linked))
    dying, survivor = (linker, linked) if who_dies == "linker" else (linked, linker)
    await end_with(ExitKind.ERROR, dying)
    await trio.sleep(5)
    assert survivor.is_alive
    assert await survivor.call("notices") == []


async def test_linking_to_a_dead_actor_kills_the_linker_with_noproc(
    system: ActorSystem,
) -> None:
    dead = await system.spawn(Peer(), name="dead")
    await dead.stop()
    linker = await system.spawn(Peer(), name="linker")
    await linker.call(("link", dead))
    with trio.fail_after(5):
        reason = await linker.wait_exited()
    assert reason.kind is ExitKind.NOPROC
    assert reason.cause is not None
    assert reason.cause.kind is ExitKind.NOPROC
    assert "/dead" in reason.detail


async def test_linking_to_a_dead_actor_gives_a_trapping_linker_a_noproc_exit(
    system: ActorSystem,
) -> None:
    dead = await system.spawn(Peer(), name="dead")
    await dead.stop()
    trapper = await system.spawn(Peer(trap=True), name="trapper")
    await trapper.call(("link", dead))
    [notice] = await trapper.call("notices")
    assert isinstance(notice, Exit)
    assert notice.actor == dead
    assert notice.reason.kind is ExitKind.NOPROC
    assert trapper.is_alive
