"""Slot monitors: ``ctx.monitor(handle)`` on a supervised child's ``ChildHandle`` gives one
``SlotRestarted`` per restart (with the old exit reason) and one final ``SlotRemoved``."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing
from trio.testing import MockClock

from actors import Actor, ActorRef, ActorSystem, ExitKind, MonitorRef
from supervisors import (
    IGNORE,
    Backoff,
    ChildHandle,
    ChildSpec,
    DynamicSupervisor,
    Restart,
    SlotRemoved,
    SlotRestarted,
    Strategy,
    SupervisorClient,
)

from .helpers import Flaky, Worker, crash, spec, start_sup


class SlotWatcher(Actor):
    """Monitors slots on request and records the notices (and ``("m", i)`` messages)."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self._changed = trio.Event()

    async def receive(self, message: Any) -> Any:
        match message:
            case SlotRestarted() | SlotRemoved() | ("m", _):
                self.seen.append(message)
                self._changed.set()
                self._changed = trio.Event()
            case ("monitor", handle):
                return self.ctx.monitor(handle)
            case ("demonitor", mref):
                self.ctx.demonitor(mref, flush=True)
            case ("hold", trio.Event() as event):
                await event.wait()
            case ("hold-then-demonitor", event, mref):
                await event.wait()
                self.ctx.demonitor(mref, flush=True)
            case "seen":
                return list(self.seen)
        return None

    async def wait_seen(self, n: int) -> list[Any]:
        """Wait (events, no polling) until ``n`` items were recorded."""
        with trio.fail_after(60):
            while len(self.seen) < n:
                await self._changed.wait()
        return list(self.seen)


class Chatty(Actor):
    """A child that casts ``("m", i)`` to a target and then crashes, when asked."""

    async def receive(self, message: Any) -> Any:
        match message:
            case ("send-then-crash", target, n):
                for i in range(n):
                    await target.cast(("m", i))
                raise RuntimeError("crashed after sending")
            case "ping":
                return "pong"
        return None


async def watch(system: ActorSystem, handle: ChildHandle) -> tuple[SlotWatcher, ActorRef, Any]:
    actor = SlotWatcher()
    ref = await system.spawn(actor)
    mref = await ref.call(("monitor", handle))
    return actor, ref, mref


async def test_a_slot_monitor_gets_one_notice_per_restart_with_the_old_reason(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    _, client = await start_sup(system, [spec("svc")], intensity=10)
    handle = await client.child("svc")
    watcher, _, mref = await watch(system, handle)
    incarnations = [handle.ref]
    await crash(client, "svc", "crash")
    incarnations.append(handle.ref)
    await crash(client, "svc", "normal")  # a permanent child comes back after any exit
    incarnations.append(handle.ref)
    old = handle.ref
    assert old is not None
    await old.kill()
    seen = await watcher.wait_seen(3)
    incarnations.append(handle.ref)
    assert [type(n) for n in seen] == [SlotRestarted] * 3
    assert [n.reason.kind for n in seen] == [ExitKind.ERROR, ExitKind.NORMAL, ExitKind.CANCELLED]
    assert [n.ref for n in seen] == incarnations[1:]
    assert len(set(incarnations)) == 4
    assert all(n.handle is handle and n.monitor is mref for n in seen)
    assert "svc crashed" in str(seen[0].reason.describe())


async def test_what_the_old_incarnation_sent_comes_before_its_slot_restarted(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    _, client = await start_sup(system, [ChildSpec("chatty", Chatty)], intensity=10)
    handle = await client.child("chatty")
    watcher, ref, _ = await watch(system, handle)
    release = trio.Event()
    await ref.cast(("hold", release))  # busy: the child's casts and the notice queue up
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    old = handle.ref
    assert old is not None
    await old.cast(("send-then-crash", ref, 4))
    await old.wait_exited()
    await client.count_children()  # the supervisor has restarted it
    assert handle.ref is not None and handle.ref != old
    release.set()
    seen = await watcher.wait_seen(5)
    assert seen[:4] == [("m", i) for i in range(4)]
    assert isinstance(seen[4], SlotRestarted) and seen[4].ref == handle.ref


@pytest.mark.parametrize(
    ("restart", "how", "kind"),
    [
        (Restart.TRANSIENT, "normal", ExitKind.NORMAL),
        (Restart.TEMPORARY, "crash", ExitKind.ERROR),
        (Restart.PERMANENT, "terminate", ExitKind.SHUTDOWN),
    ],
)
async def test_a_slot_that_will_not_come_back_sends_slot_removed_and_ends_the_monitor(
    system: ActorSystem, autojump_clock: MockClock, restart: Restart, how: str, kind: ExitKind
) -> None:
    _, client = await start_sup(system, [spec("svc", restart=restart), spec("other")])
    handle = await client.child("svc")
    watcher, ref, mref = await watch(system, handle)
    if how == "terminate":
        await client.terminate_child("svc")
    else:
        await crash(client, "svc", how)
    [notice] = await watcher.wait_seen(1)
    assert isinstance(notice, SlotRemoved)
    assert (notice.handle, notice.monitor, notice.reason.kind) == (handle, mref, kind)
    assert handle.monitors == 0
    assert await ref.call("seen") == [notice]


async def test_every_watched_slot_is_removed_when_the_supervisor_stops(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    sup, client = await start_sup(system, [spec("a"), spec("b")])
    a, b = await client.child("a"), await client.child("b")
    watcher, _, _ = await watch(system, a)
    second, _, _ = await watch(system, b)
    await sup.stop()
    for recorder, handle in ((watcher, a), (second, b)):
        [notice] = await recorder.wait_seen(1)
        assert isinstance(notice, SlotRemoved) and notice.handle is handle
        assert notice.reason.kind is ExitKind.SHUTDOWN


async def test_a_slot_whose_supervisor_gives_up_is_removed_after_its_restarts(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    sup, client = await start_sup(system, [spec("svc")], intensity=1, period=5.0)
    handle = await client.child("svc")
    watcher, _, _ = await watch(system, handle)
    await crash(client, "svc")
    await crash(client, "svc", sync=False)
    await sup.wait_exited()
    seen = await watcher.wait_seen(2)
    assert [type(n) for n in seen] == [SlotRestarted, SlotRemoved]
    assert seen[1].reason.kind is ExitKind.ERROR  # the last incarnation's crash


async def test_monitoring_a_stopped_slot_gives_slot_removed_at_once(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    _, client = await start_sup(system, [spec("svc")])
    handle = await client.child("svc")
    await client.terminate_child("svc")
    watcher, _, mref = await watch(system, handle)
    [notice] = await watcher.wait_seen(1)
    assert isinstance(notice, SlotRemoved) and notice.monitor is mref
    assert notice.reason.kind is ExitKind.NOPROC
    assert handle.monitors == 0


async def test_demonitor_ends_a_slot_monitor_and_flushes_its_queued_notices(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    _, client = await start_sup(system, [spec("svc")], intensity=10)
    handle = await client.child("svc")
    watcher, ref, mref = await watch(system, handle)
    release = trio.Event()
    await ref.cast(("hold-then-demonitor", release, mref))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await crash(client, "svc")
    await crash(client, "svc")  # two notices queued behind the held handler
    assert handle.monitors == 1
    release.set()
    assert await ref.call("seen") == []
    assert handle.monitors == 0
    await crash(client, "svc")
    await client.count_children()
    assert await ref.call("seen") == []  # a notice would have been served before this call
    assert watcher.seen == []


async def test_a_dynamic_childs_slot_is_watched_until_it_is_terminated(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    template = spec("worker")
    sup = await system.spawn(DynamicSupervisor(template, intensity=10), name="dyn")
    client = SupervisorClient(sup, timeout=1000)
    handle = await client.start_child(name="w1")
    assert handle is not None
    watcher, _, _ = await watch(system, handle)
    await crash(client, "w1")
    await client.terminate_child(handle)
    seen = await watcher.wait_seen(2)
    assert [type(n) for n in seen] == [SlotRestarted, SlotRemoved]
    assert seen[0].reason.kind is ExitKind.ERROR
    assert seen[1].reason.kind is ExitKind.SHUTDOWN


async def test_a_restart_after_a_backoff_is_announced_once_the_new_incarnation_is_up(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    backoff = Backoff(min=3.0, max=10.0, random_factor=0.0)
    _, client = await start_sup(system, [spec("svc")], intensity=10, backoff=backoff)
    handle = await client.child("svc")
    watcher, _, _ = await watch(system, handle)
    crashed_at = trio.current_time()
    await crash(client, "svc")
    [notice] = await watcher.wait_seen(1)
    assert trio.current_time() - crashed_at >= 3.0
    assert isinstance(notice, SlotRestarted) and notice.ref.is_alive
    assert notice.ref == handle.ref
    assert await notice.ref.call("ping") == ("pong", "svc", 1)


async def test_watchers_that_exit_without_demonitoring_do_not_pile_up(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    _, client = await start_sup(system, [spec("svc")], intensity=10)
    handle = await client.child("svc")
    keeper, _, _ = await watch(system, handle)
    for _ in range(200):
        _, ref, _ = await watch(system, handle)
        await ref.stop()
    assert handle.monitors <= 9  # swept past 8, and past twice what was alive at a sweep
    await crash(client, "svc")
    [notice] = await keeper.wait_seen(1)
    assert isinstance(notice, SlotRestarted)
    assert handle.monitors == 1  # the dead ones are dropped when told


async def test_a_slot_monitor_is_a_monitor_ref_the_runtime_can_demonitor(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    _, client = await start_sup(system, [spec("svc")])
    handle = await client.child("svc")
    _, ref, mref = await watch(system, handle)
    assert isinstance(mref, MonitorRef) and mref.target is handle
    await ref.call(("demonitor", mref))
    await ref.call(("demonitor", mref))  # twice is harmless
    assert handle.monitors == 0


async def test_a_bystander_of_a_group_restart_reports_its_shutdown(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    _, client = await start_sup(
        system, [spec("a"), spec("b")], strategy=Strategy.ONE_FOR_ALL, intensity=10
    )
    a, b = await client.child("a"), await client.child("b")
    on_a, _, _ = await watch(system, a)
    on_b, _, _ = await watch(system, b)
    await crash(client, "a")
    [for_a] = await on_a.wait_seen(1)
    [for_b] = await on_b.wait_seen(1)
    assert (for_a.reason.kind, for_b.reason.kind) == (ExitKind.ERROR, ExitKind.SHUTDOWN)
    assert (for_a.ref, for_b.ref) == (a.ref, b.ref)


async def test_a_restart_retried_after_failed_starts_is_one_notice(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    factory = Flaky("svc")
    _, client = await start_sup(system, [ChildSpec("svc", factory)], intensity=10)
    handle = await client.child("svc")
    watcher, ref, _ = await watch(system, handle)
    factory.fail_next = 2
    await crash(client, "svc")
    [notice] = await watcher.wait_seen(1)
    assert factory.calls == 4  # the first start, two failed restarts, the good one
    assert isinstance(notice, SlotRestarted) and notice.reason.kind is ExitKind.ERROR
    await client.count_children()
    assert await ref.call("seen") == [notice]


async def test_a_restart_that_returns_ignore_removes_the_slot(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    made: list[int] = []

    def once() -> Any:
        made.append(1)
        return Worker("svc") if len(made) == 1 else IGNORE

    _, client = await start_sup(system, [ChildSpec("svc", once)], intensity=10)
    handle = await client.child("svc")
    watcher, _, _ = await watch(system, handle)
    await crash(client, "svc")
    [notice] = await watcher.wait_seen(1)
    assert isinstance(notice, SlotRemoved) and notice.reason.kind is ExitKind.ERROR
