"""Monitors on things that are not actors: ``Watchable`` targets and ``ActorRef.notify``."""

from __future__ import annotations

from typing import Any

import attrs
import trio
import trio.testing
from trio.testing import MockClock

from actors import Actor, ActorRef, ActorSystem, MonitorRef, Watchable


@attrs.frozen(slots=True)
class Lit:
    monitor: MonitorRef
    n: int


class Beacon:
    """A Watchable that sends ``Lit`` to its watchers each time it is lit."""

    def __init__(self) -> None:
        self.watchers: dict[MonitorRef, ActorRef] = {}
        self.lit = 0

    def add_monitor(self, mref: MonitorRef, watcher: ActorRef) -> None:
        self.watchers[mref] = watcher

    def remove_monitor(self, mref: MonitorRef) -> None:
        self.watchers.pop(mref, None)

    def light(self, after: tuple[ActorRef, ...] = ()) -> list[bool]:
        self.lit += 1
        return [w.notify(Lit(m, self.lit), after=after) for m, w in self.watchers.items()]


class Watcher(Actor):
    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def receive(self, message: Any) -> Any:
        match message:
            case Lit() | ("m", _):
                self.seen.append(message)
            case ("monitor", target):
                return self.ctx.monitor(target)
            case ("demonitor", mref):
                self.ctx.demonitor(mref, flush=True)
            case ("hold", trio.Event() as event):
                await event.wait()
            case ("hold-then-demonitor", event, mref):
                await event.wait()
                self.ctx.demonitor(mref, flush=True)
            case ("send", target, n):
                for i in range(n):
                    await target.cast(("m", i))
            case "seen":
                return list(self.seen)
        return None


async def test_a_watchable_delivers_its_notices_ahead_of_ordinary_messages(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    beacon = Beacon()
    assert isinstance(beacon, Watchable)
    ref = await system.spawn(Watcher())
    mref = await ref.call(("monitor", beacon))
    assert mref.target is beacon and beacon.watchers == {mref: ref}
    release = trio.Event()
    await ref.cast(("hold", release))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await ref.cast(("m", 0))  # from outside actors: a notice may go first
    assert beacon.light() == [True]
    release.set()
    assert await ref.call("seen") == [Lit(mref, 1), ("m", 0)]


async def test_a_notice_never_overtakes_what_an_actor_in_after_sent(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    beacon = Beacon()
    ref = await system.spawn(Watcher())
    other = await system.spawn(Watcher())
    mref = await ref.call(("monitor", beacon))
    release = trio.Event()
    await ref.cast(("hold", release))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await other.call(("send", ref, 3))
    beacon.light(after=(other,))
    release.set()
    assert await ref.call("seen") == [("m", 0), ("m", 1), ("m", 2), Lit(mref, 1)]


async def test_demonitor_flushes_every_queued_notice_of_a_watchable(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    beacon = Beacon()
    ref = await system.spawn(Watcher())
    mref = await ref.call(("monitor", beacon))
    release = trio.Event()
    await ref.cast(("hold-then-demonitor", release, mref))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    beacon.light()
    beacon.light()
    release.set()
    assert await ref.call("seen") == []
    assert beacon.watchers == {}


async def test_notify_to_an_exited_actor_is_refused(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    beacon = Beacon()
    ref = await system.spawn(Watcher())
    await ref.call(("monitor", beacon))
    await ref.stop()
    assert beacon.light() == [False]


class Monitors(Actor):
    """Answers ``ctx.monitor(message)``, or the error it raised (the actor survives)."""

    async def receive(self, message: Any) -> Any:
        try:
            return self.ctx.monitor(message)
        except TypeError as exc:
            return exc


async def test_monitor_names_a_target_it_cannot_watch(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Monitors())
    error = await ref.call("not-a-target")
    assert isinstance(error, TypeError)
    assert str(error) == (
        "monitor target must be an ActorRef or a Watchable (such as a ChildHandle), "
        "got 'not-a-target'"
    )
