"""Mailboxes: overflow policies, the system lane, statistics and configuration."""

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
    Down,
    Exit,
    ExitKind,
    LivenessSpec,
    MailboxConfig,
    MailboxFull,
    Overflow,
    Stale,
)
from actors._cell import THROUGHPUT
from actors._envelope import Envelope
from actors._mailbox import Mailbox

# == actors ==========================================================================


class Gated(Actor):
    """Logs every message; "hold" blocks it until ``gate`` is set."""

    def __init__(self) -> None:
        self.gate = trio.Event()
        self.log: list[Any] = []

    async def receive(self, message: Any) -> Any:
        self.log.append(message)
        if message == "hold":
            await self.gate.wait()
        return message


class Watcher(Gated):
    """A gated actor that can monitor or liveness-watch another actor on request."""

    async def receive(self, message: Any) -> Any:
        if isinstance(message, tuple) and message[0] == "monitor":
            self.ctx.monitor(message[1])
            return "monitoring"
        if isinstance(message, tuple) and message[0] == "watch":
            self.ctx.watch_liveness(message[1], LivenessSpec(interval=1.0, allowed_misses=0))
            return "watching"
        return await super().receive(message)


class SmallDropper(Gated):
    mailbox = MailboxConfig(capacity=2, overflow=Overflow.DROP_NEWEST)


class Crasher(Actor):
    async def receive(self, message: Any) -> Any:
        raise RuntimeError(f"crashed on {message!r}")


class TrappingParent(Gated):
    """Traps exits and starts one child called "child"."""

    trap_exits = True

    async def on_start(self) -> None:
        await self.ctx.spawn(Crasher(), name="child")


# == helpers =========================================================================


async def spawn_held(
    system: ActorSystem, capacity: int, overflow: Overflow, actor: Gated | None = None
) -> tuple[ActorRef, Gated]:
    """Spawn a gated actor and leave it blocked in "hold" with an empty mailbox."""
    actor = actor if actor is not None else Gated()
    ref = await system.spawn(actor, mailbox=MailboxConfig(capacity, overflow))
    await ref.cast("hold")
    await trio.testing.wait_all_tasks_blocked()
    assert actor.log[-1] == "hold"
    return ref, actor


async def release(actor: Gated) -> None:
    """Open the gate and let the actor drain its mailbox."""
    actor.gate.set()
    await trio.testing.wait_all_tasks_blocked()


def stats_of(system: ActorSystem, ref: ActorRef) -> dict[str, Any]:
    """The mailbox statistics of a top-level actor, as ``system.snapshot()`` shows them."""
    for node in system.snapshot()["children"]:
        if node["path"] == ref.path:
            return dict(node["mailbox"])
    raise LookupError(ref.path)


def expected_stats(capacity: int, overflow: Overflow, **counters: int) -> dict[str, Any]:
    base = {"depth": 0, "system_depth": 0, "high_water": 0, "received": 0, "dropped": 0}
    return {**base, **counters, "capacity": capacity, "overflow": overflow.value}


class Drops:
    """An ``on_drop`` callback that remembers (message, reason) pairs."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, str]] = []

    def __call__(self, envelope: Envelope, reason: str) -> None:
        self.items.append((envelope.message, reason))


# == configuration ===================================================================


def test_config_defaults() -> None:
    config = MailboxConfig()
    assert (config.capacity, config.overflow) == (1000, Overflow.BLOCK)


@pytest.mark.parametrize("capacity", [0, -1, 1.5, True, "10", None])
def test_config_rejects_bad_capacity(capacity: Any) -> None:
    with pytest.raises(ValueError, match=r"mailbox capacity must be an int >= 1"):
        MailboxConfig(capacity=capacity)


@pytest.mark.parametrize("overflow", ["block", None, 1])
def test_config_rejects_bad_overflow(overflow: Any) -> None:
    with pytest.raises(ValueError, match=r"mailbox overflow must be one of .*'drop_oldest'"):
        MailboxConfig(overflow=overflow)


# == overflow policies through actors ===============================================


async def test_block_sender_waits_for_space_then_proceeds(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 2, Overflow.BLOCK)
    assert await ref.cast(1) is True
    assert await ref.cast(2) is True
    results: list[bool] = []

    async def third_sender() -> None:
        results.append(await ref.cast(3))

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(third_sender)
            await trio.sleep(30)  # a blocked cast has no timeout: it is still waiting
            assert results == []
            assert stats_of(system, ref)["depth"] == 2
            actor.gate.set()
    assert results == [True]
    await trio.testing.wait_all_tasks_blocked()
    assert actor.log == ["hold", 1, 2, 3]
    assert stats_of(system, ref) == expected_stats(
        2, Overflow.BLOCK, high_water=2, received=4, dropped=0
    )


async def test_drop_newest_discards_the_new_message(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 2, Overflow.DROP_NEWEST)
    assert [await ref.cast(m) for m in (1, 2, 3, 4)] == [True, True, False, False]
    await release(actor)
    assert actor.log == ["hold", 1, 2]
    assert stats_of(system, ref) == expected_stats(
        2, Overflow.DROP_NEWEST, high_water=2, received=3, dropped=2
    )


async def test_drop_oldest_discards_the_oldest_queued_message(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 2, Overflow.DROP_OLDEST)
    assert [await ref.cast(m) for m in (1, 2, 3, 4)] == [True, True, True, True]
    await release(actor)
    assert actor.log == ["hold", 3, 4]
    assert stats_of(system, ref) == expected_stats(
        2, Overflow.DROP_OLDEST, high_water=2, received=5, dropped=2
    )


async def test_fail_raises_mailbox_full_naming_path_and_capacity(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 2, Overflow.FAIL)
    await ref.cast(1)
    await ref.cast(2)
    with pytest.raises(MailboxFull) as info:
        await ref.cast(3)
    assert info.value.path == ref.path
    assert info.value.capacity == 2
    assert ref.path in str(info.value)
    assert "capacity 2" in str(info.value)
    await release(actor)
    assert actor.log == ["hold", 1, 2]
    # A refused message is the sender's to keep: it is neither dropped nor a dead letter.
    assert stats_of(system, ref)["dropped"] == 0
    assert system.dead_letters.total == 0


async def test_cast_nowait_on_full_block_mailbox_raises(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 1, Overflow.BLOCK)
    assert ref.cast_nowait(1) is True
    with pytest.raises(MailboxFull) as info:
        ref.cast_nowait(2)
    assert (info.value.path, info.value.capacity) == (ref.path, 1)
    await release(actor)
    assert actor.log == ["hold", 1]


async def test_cast_nowait_under_drop_newest_returns_false(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 1, Overflow.DROP_NEWEST)
    assert ref.cast_nowait(1) is True
    assert ref.cast_nowait(2) is False
    await release(actor)
    assert actor.log == ["hold", 1]


async def test_call_dropped_as_newest_raises_mailbox_full_at_once(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 1, Overflow.DROP_NEWEST)
    await ref.cast(1)
    start = trio.current_time()
    with trio.fail_after(60), pytest.raises(MailboxFull) as info:
        await ref.call("question")
    assert trio.current_time() == start
    assert (info.value.path, info.value.capacity) == (ref.path, 1)
    await release(actor)
    assert actor.log == ["hold", 1]


async def test_call_dropped_as_oldest_raises_mailbox_full_in_the_caller(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 1, Overflow.DROP_OLDEST)
    errors: list[BaseException] = []

    async def caller() -> None:
        try:
            await ref.call("question")
        except MailboxFull as exc:
            errors.append(exc)

    start = trio.current_time()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(caller)
            await trio.testing.wait_all_tasks_blocked()
            await ref.cast("pusher")  # evicts the queued call
    assert trio.current_time() == start  # no wait for the call timeout
    assert len(errors) == 1
    assert isinstance(errors[0], MailboxFull)
    await release(actor)
    assert actor.log == ["hold", "pusher"]


async def test_call_refused_by_fail_policy_raises_mailbox_full(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 1, Overflow.FAIL)
    await ref.cast(1)
    with pytest.raises(MailboxFull):
        await ref.call("question")
    await release(actor)
    assert actor.log == ["hold", 1]


async def test_class_mailbox_config_is_the_default_and_spawn_overrides_it(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    by_class = await system.spawn(SmallDropper())
    overridden = await system.spawn(SmallDropper(), mailbox=MailboxConfig(5, Overflow.FAIL))
    plain = await system.spawn(Gated())
    assert stats_of(system, by_class) == expected_stats(2, Overflow.DROP_NEWEST)
    assert stats_of(system, overridden) == expected_stats(5, Overflow.FAIL)
    assert stats_of(system, plain) == expected_stats(1000, Overflow.BLOCK)


# == the system lane =================================================================


@pytest.mark.parametrize("overflow", list(Overflow))
def test_system_lane_is_served_first_and_never_drops(overflow: Overflow) -> None:
    drops = Drops()
    mailbox = Mailbox("/m", MailboxConfig(1, overflow), drops)
    assert mailbox.put_nowait(Envelope("ordinary")) is True
    notices = ["down", "exit", "stale", "stop", "probe"]
    assert all(mailbox.put_system(n) for n in notices)
    assert (mailbox.depth, mailbox.system_depth) == (1, 5)
    assert [mailbox.get_nowait() for _ in notices] == notices
    item = mailbox.get_nowait()
    assert isinstance(item, Envelope)
    assert item.message == "ordinary"
    assert mailbox.get_nowait() is None
    assert drops.items == []
    assert mailbox.dropped == 0


async def test_down_is_served_ahead_of_ordinary_messages_and_not_dropped(
    system: ActorSystem,
    autojump_clock: MockClock,
) -> None:
    target = await system.spawn(Gated())
    watcher = Watcher()
    ref = await system.spawn(watcher, mailbox=MailboxConfig(2, Overflow.DROP_NEWEST))
    assert await ref.call(("monitor", target)) == "monitoring"
    await ref.cast("hold")
    await trio.testing.wait_all_tasks_blocked()
    assert [await ref.cast(m) for m in (1, 2, 3)] == [True, True, False]  # lane is full
    await target.kill()
    assert stats_of(system, ref)["system_depth"] == 1
    await release(watcher)
    down = watcher.log[1]
    assert isinstance(down, Down)
    assert down.actor == target
    assert down.reason.kind is ExitKind.CANCELLED
    assert watcher.log == ["hold", down, 1, 2]
    assert stats_of(system, ref)["dropped"] == 1  # only the ordinary message 3


async def test_exit_is_served_ahead_of_ordinary_messages(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    parent = TrappingParent()
    ref, _ = await spawn_held(system, 2, Overflow.FAIL, parent)
    child = system.lookup(f"{ref.path}/child")
    assert child is not None
    await ref.cast(1)
    await ref.cast(2)  # the ordinary lane is now full
    await child.cast("boom")
    await trio.testing.wait_all_tasks_blocked()
    await release(parent)
    exit_ = parent.log[1]
    assert isinstance(exit_, Exit)
    assert exit_.actor == child
    assert exit_.reason.kind is ExitKind.ERROR
    assert isinstance(exit_.reason.error, RuntimeError)
    assert parent.log == ["hold", exit_, 1, 2]


async def test_stale_is_served_ahead_of_queued_ordinary_messages(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    """A busy actor fires its timers every THROUGHPUT messages; the Stale it then
    queues jumps ahead of the ordinary messages still waiting."""
    target_actor = Gated()
    target, _ = await spawn_held(system, 10, Overflow.BLOCK, target_actor)  # never beats
    watcher = Watcher()
    ref = await system.spawn(watcher)
    assert await ref.call(("watch", target)) == "watching"
    await ref.cast("hold")
    await trio.testing.wait_all_tasks_blocked()
    await trio.sleep(10)  # the target is long stale, but the busy watcher has not ticked
    count = THROUGHPUT + 10
    for n in range(1, count + 1):
        await ref.cast(n)
    await release(watcher)
    stales = [m for m in watcher.log if isinstance(m, Stale)]
    assert len(stales) == 1
    assert stales[0].actor == target
    assert stales[0].heartbeat_age >= 10
    # "hold", then THROUGHPUT - 1 messages, then the Stale, then the rest.
    expected = ["hold", *range(1, THROUGHPUT)]
    expected += [stales[0], *range(THROUGHPUT, count + 1)]
    assert watcher.log == expected
    target_actor.gate.set()


async def test_stop_is_served_ahead_of_ordinary_messages(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, 3, Overflow.DROP_NEWEST)
    for n in (1, 2, 3, 4):
        await ref.cast(n)  # 4 is dropped: the lane is full
    reasons: list[Any] = []

    async def stopper() -> None:
        reasons.append(await ref.stop())

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stopper)
            await trio.testing.wait_all_tasks_blocked()
            actor.gate.set()
    assert [r.kind for r in reasons] == [ExitKind.SHUTDOWN]
    assert actor.log == ["hold"]
    letters = [(d.message, d.reason) for d in system.dead_letters.recent]
    assert letters == [
        (4, "dropped as newest (mailbox full)"),
        (1, "recipient exited"),
        (2, "recipient exited"),
        (3, "recipient exited"),
    ]


async def test_an_actor_sees_how_many_messages_wait_behind_the_one_in_hand(
    system: ActorSystem,
) -> None:
    seen: list[int] = []
    gate = trio.Event()
    done = trio.Event()

    class Counting(Actor):
        async def receive(self, message: object) -> None:
            if message == "first":
                await gate.wait()
            seen.append(self.ctx.mailbox_depth)
            if len(seen) == 4:
                done.set()

    ref = await system.spawn(Counting())
    with trio.fail_after(5):
        await ref.cast("first")
        await trio.testing.wait_all_tasks_blocked()
        for n in range(3):
            await ref.cast(n)
        gate.set()
        await done.wait()
    assert seen == [3, 2, 1, 0]
