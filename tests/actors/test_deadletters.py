"""Dead letters: counted, remembered and published; event subscriptions stay bounded."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing
from trio.testing import MockClock

from actors import (
    Actor,
    ActorExitedEvent,
    ActorRef,
    ActorSystem,
    DeadLetter,
    MailboxConfig,
    MailboxFull,
    Overflow,
)

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


class Forwarder(Actor):
    """Casts each (target, message) it gets and returns what the cast returned."""

    async def receive(self, message: Any) -> Any:
        target, payload = message
        return await target.cast(payload)


# == helpers =========================================================================


async def spawn_held(
    system: ActorSystem, config: MailboxConfig | None = None
) -> tuple[ActorRef, Gated]:
    actor = Gated()
    ref = await system.spawn(actor, mailbox=config)
    await ref.cast("hold")
    await trio.testing.wait_all_tasks_blocked()
    return ref, actor


def letters(sub_events: list[Any]) -> list[DeadLetter]:
    return [e for e in sub_events if isinstance(e, DeadLetter)]


# == dead recipients =================================================================


async def test_cast_to_a_dead_actor_is_a_dead_letter(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Gated(), name="gone")
    await ref.stop()
    with system.events.subscribe() as sub:
        assert await ref.cast("hello?") is False
        events = sub.drain()
    expected = DeadLetter("/gone", "hello?", "recipient exited", None)
    assert events == [expected]
    assert system.dead_letters.total == 1
    assert system.dead_letters.by_reason == {"recipient exited": 1}
    assert list(system.dead_letters.recent) == [expected]


async def test_cast_nowait_to_a_dead_actor_is_a_dead_letter(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Gated(), name="gone")
    await ref.kill()
    assert ref.cast_nowait("hello?") is False
    assert list(system.dead_letters.recent) == [
        DeadLetter("/gone", "hello?", "recipient exited", None)
    ]


async def test_dead_letter_names_the_sending_actor(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Gated(), name="gone")
    await ref.stop()
    forwarder = await system.spawn(Forwarder(), name="fwd")
    assert await forwarder.call((ref, "via actor")) is False
    assert list(system.dead_letters.recent) == [
        DeadLetter("/gone", "via actor", "recipient exited", "/fwd")
    ]


async def test_each_dead_letter_is_published_once(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Gated(), name="gone")
    await ref.stop()
    with system.events.subscribe() as sub:
        for n in range(3):
            await ref.cast(n)
        events = sub.drain()
    assert [d.message for d in letters(events)] == [0, 1, 2]
    assert system.dead_letters.total == 3


async def test_messages_left_in_the_mailbox_become_dead_letters(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system)
    for n in (1, 2, 3):
        await ref.cast(n)
    with system.events.subscribe() as sub:
        await ref.kill()
        events = sub.drain()
    assert actor.log == ["hold"]
    expected = [DeadLetter(ref.path, n, "recipient exited", None) for n in (1, 2, 3)]
    assert letters(events) == expected
    assert list(system.dead_letters.recent) == expected
    assert [type(e) for e in events] == [DeadLetter] * 3 + [ActorExitedEvent]


async def test_blocked_sender_gets_false_when_the_recipient_exits(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, _ = await spawn_held(system, MailboxConfig(1, Overflow.BLOCK))
    await ref.cast("queued")
    results: list[bool] = []

    async def blocked_sender() -> None:
        results.append(await ref.cast("waiting"))

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(blocked_sender)
            await trio.testing.wait_all_tasks_blocked()
            assert results == []
            await ref.kill()
    assert results == [False]
    assert [(d.message, d.reason) for d in system.dead_letters.recent] == [
        ("queued", "recipient exited"),
        ("waiting", "recipient exited"),
    ]


# == dropped by policy ===============================================================


async def test_dropped_newest_is_a_dead_letter_with_its_reason(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, MailboxConfig(1, Overflow.DROP_NEWEST))
    with system.events.subscribe() as sub:
        await ref.cast(1)
        await ref.cast(2)
        events = sub.drain()
    expected = DeadLetter(ref.path, 2, "dropped as newest (mailbox full)", None)
    assert events == [expected]
    assert list(system.dead_letters.recent) == [expected]
    assert system.dead_letters.by_reason == {"dropped as newest (mailbox full)": 1}
    actor.gate.set()


async def test_dropped_oldest_is_a_dead_letter_with_its_reason(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, MailboxConfig(2, Overflow.DROP_OLDEST))
    with system.events.subscribe() as sub:
        for n in (1, 2, 3, 4):
            await ref.cast(n)
        events = sub.drain()
    reason = "dropped as oldest (mailbox full)"
    expected = [DeadLetter(ref.path, 1, reason, None), DeadLetter(ref.path, 2, reason, None)]
    assert events == expected
    assert system.dead_letters.by_reason == {reason: 2}
    actor.gate.set()
    await trio.testing.wait_all_tasks_blocked()
    assert actor.log == ["hold", 3, 4]


async def test_dropped_call_is_a_dead_letter(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref, actor = await spawn_held(system, MailboxConfig(1, Overflow.DROP_NEWEST))
    await ref.cast(1)
    with pytest.raises(MailboxFull):
        await ref.call("question")
    assert [(d.message, d.reason) for d in system.dead_letters.recent] == [
        ("question", "dropped as newest (mailbox full)")
    ]
    actor.gate.set()


# == the ring of recent letters ======================================================


async def test_recent_keeps_the_latest_thousand(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Gated())
    await ref.stop()
    for n in range(1005):
        ref.cast_nowait(n)
    assert system.dead_letters.total == 1005
    recent = system.dead_letters.recent
    assert len(recent) == 1000
    assert (recent[0].message, recent[-1].message) == (5, 1004)
    assert system.snapshot()["dead_letters"] == {
        "total": 1005,
        "by_reason": {"recipient exited": 1005},
    }


# == bounded subscriptions ===========================================================


async def test_overflowing_subscription_counts_lagged_and_never_blocks(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Gated())
    await ref.stop()
    start = trio.current_time()
    with system.events.subscribe(capacity=2) as small, system.events.subscribe() as big:
        with trio.fail_after(60):
            for n in range(5):
                assert await ref.cast(n) is False
        assert trio.current_time() == start
        assert small.lagged == 3
        assert big.lagged == 0
        assert [d.message for d in small.drain()] == [0, 1]  # the oldest ones were kept
        assert [d.message for d in big.drain()] == [0, 1, 2, 3, 4]
        ref.cast_nowait(5)  # room again after draining
        assert [d.message for d in small.drain()] == [5]
        assert small.lagged == 3
    assert system.dead_letters.total == 6


async def test_subscription_receives_asynchronously(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Gated())
    await ref.stop()
    with system.events.subscribe() as sub, trio.fail_after(60):
        await ref.cast("x")
        event = await sub.receive.receive()
    assert event == DeadLetter(ref.path, "x", "recipient exited", None)


async def test_closed_subscription_gets_nothing_more(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Gated())
    await ref.stop()
    with system.events.subscribe() as sub:
        pass
    await ref.cast("after")
    assert sub.drain() == []
    assert not system.events.has_subscribers
    assert system.dead_letters.total == 1


@pytest.mark.parametrize("capacity", [0, -1])
async def test_subscription_capacity_must_be_positive(
    system: ActorSystem, autojump_clock: MockClock, capacity: int
) -> None:
    with (
        pytest.raises(ValueError, match="subscription capacity must be >= 1"),
        system.events.subscribe(capacity=capacity),
    ):
        pass
