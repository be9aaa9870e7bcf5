"""call and cast: ordering, replies, timeouts, deaths, late and deferred replies, senders."""

from __future__ import annotations

import math
from typing import Any

import outcome
import pytest
import trio
import trio.testing
from trio.testing import MockClock

from actors import (
    Actor,
    ActorExited,
    ActorRef,
    ActorSystem,
    CallTimeout,
    CallToSelf,
    ExitKind,
    MailboxConfig,
    Overflow,
    Reply,
    open_system,
)

# == actors ==========================================================================


class Recorder(Actor):
    """Logs every message; a call to "log" returns the log so far."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    async def receive(self, message: Any) -> Any:
        if message == "log":
            return list(self.log)
        self.log.append(message)
        return ("echo", message)


class Slow(Actor):
    """("sleep", seconds, value) sleeps then replies value; anything else is echoed."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    async def receive(self, message: Any) -> Any:
        self.log.append(message)
        if isinstance(message, tuple) and message[0] == "sleep":
            await trio.sleep(message[1])
            return message[2]
        return ("echo", message)


class Silent(Actor):
    """Takes every call and never answers it."""

    def __init__(self) -> None:
        self.pending: list[Reply] = []

    async def receive(self, message: Any) -> Any:
        self.pending.append(self.ctx.defer_reply())


class Crasher(Actor):
    """Raises on any message: at once, after ("crash-after", s) seconds, or never ("hang")."""

    async def receive(self, message: Any) -> Any:
        if isinstance(message, tuple) and message[0] == "crash-after":
            await trio.sleep(message[1])
        if message == "hang":
            await trio.sleep_forever()
        raise RuntimeError("boom")


class SelfCaller(Actor):
    async def receive(self, message: Any) -> Any:
        try:
            await self.ctx.self.call("anything")
        except CallToSelf as exc:
            return exc
        return "no error"


class Deferring(Actor):
    """Defers the reply to "get": later ("send", v) or ("fail", error) answers it."""

    def __init__(self) -> None:
        self.waiting: list[Reply] = []
        self.sent: list[bool] = []

    async def receive(self, message: Any) -> Any:
        if message == "get":
            self.waiting.append(self.ctx.defer_reply())
            return "ignored: the reply is deferred"
        if message == "crash":
            raise RuntimeError("crashed with a reply pending")
        kind, value = message
        for reply in self.waiting:
            self.sent.append(reply.send(value) if kind == "send" else reply.fail(value))
        self.waiting.clear()
        return None


class WhoSent(Actor):
    """Returns (and records) ``ctx.sender`` of every message."""

    def __init__(self) -> None:
        self.senders: list[ActorRef | None] = []

    async def receive(self, message: Any) -> Any:
        self.senders.append(self.ctx.sender)
        return self.ctx.sender


class Client(Actor):
    """("call", ref) calls ref; ("cast", ref) casts to ref."""

    async def receive(self, message: Any) -> Any:
        kind, target = message
        if kind == "call":
            return await target.call("who?")
        return await target.cast("who?")


class Gated(Actor):
    """Logs every message; "hold" blocks until ``gate`` is set, ("sleep", s) sleeps."""

    def __init__(self) -> None:
        self.gate = trio.Event()
        self.log: list[Any] = []

    async def receive(self, message: Any) -> Any:
        self.log.append(message)
        if message == "hold":
            await self.gate.wait()
        if isinstance(message, tuple) and message[0] == "sleep":
            await trio.sleep(message[1])
        return ("echo", message)


# == helpers =========================================================================


async def call_in_background(
    nursery: trio.Nursery, ref: ActorRef, message: Any, **kw: Any
) -> list[outcome.Outcome[Any]]:
    """Start ``ref.call`` in a task; the returned list gets its outcome."""
    results: list[outcome.Outcome[Any]] = []

    async def run() -> None:
        results.append(await outcome.acapture(ref.call, message, **kw))

    nursery.start_soon(run)
    await trio.testing.wait_all_tasks_blocked()
    return results


# == cast ============================================================================


async def test_casts_arrive_in_order(system: ActorSystem, autojump_clock: MockClock) -> None:
    actor = Recorder()
    ref = await system.spawn(actor)
    for n in range(200):
        assert await ref.cast(n) is True
    assert await ref.call("log") == list(range(200))


async def test_casts_from_an_actor_arrive_in_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    class Burst(Actor):
        async def receive(self, target: Any) -> Any:
            for n in range(50):
                await target.cast(n)

    recorder = await system.spawn(Recorder())
    await (await system.spawn(Burst())).call(recorder)
    assert await recorder.call("log") == list(range(50))


# == call ============================================================================


async def test_call_returns_the_reply(system: ActorSystem, autojump_clock: MockClock) -> None:
    ref = await system.spawn(Recorder())
    assert await ref.call("hello") == ("echo", "hello")
    assert await ref.call(42) == ("echo", 42)


async def test_call_and_cast_share_one_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Recorder())
    await ref.cast("a")
    assert await ref.call("b") == ("echo", "b")
    await ref.cast("c")
    assert await ref.call("log") == ["a", "b", "c"]


async def test_default_call_timeout_is_five_seconds(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Silent())
    start = trio.current_time()
    with trio.fail_after(60), pytest.raises(CallTimeout) as info:
        await ref.call("anyone there?")
    assert trio.current_time() - start == pytest.approx(5.0)
    assert info.value.timeout == 5.0
    assert info.value.path == ref.path
    assert isinstance(info.value, TimeoutError)
    assert "timed out after 5s" in str(info.value)


async def test_open_system_default_call_timeout_is_five_seconds(autojump_clock: MockClock) -> None:
    async with open_system("defaults") as own:
        ref = await own.spawn(Silent())
        start = trio.current_time()
        with trio.fail_after(60), pytest.raises(CallTimeout) as info:
            await ref.call("anyone there?")
        assert trio.current_time() - start == pytest.approx(5.0)
        assert info.value.timeout == 5.0


async def test_custom_call_timeout(system: ActorSystem, autojump_clock: MockClock) -> None:
    ref = await system.spawn(Silent())
    start = trio.current_time()
    with trio.fail_after(60), pytest.raises(CallTimeout) as info:
        await ref.call("anyone there?", timeout=0.25)
    assert trio.current_time() - start == pytest.approx(0.25)
    assert info.value.timeout == 0.25


async def test_call_succeeds_just_within_its_timeout(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Slow())
    with trio.fail_after(60):
        assert await ref.call(("sleep", 9.0, "done"), timeout=10) == "done"


@pytest.mark.parametrize("timeout", [0, -1, -0.5, math.nan])
async def test_invalid_call_timeout_is_rejected_before_sending(
    system: ActorSystem, autojump_clock: MockClock, timeout: float
) -> None:
    actor = Recorder()
    ref = await system.spawn(actor)
    with pytest.raises(ValueError, match="call timeout must be > 0"):
        await ref.call("never sent", timeout=timeout)
    assert await ref.call("log") == []


# == deaths ==========================================================================


async def test_callee_crashing_mid_call_raises_actor_exited_at_once(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Crasher())
    start = trio.current_time()
    with trio.fail_after(60), pytest.raises(ActorExited) as info:
        await ref.call(("crash-after", 1.5), timeout=30)
    assert trio.current_time() - start == pytest.approx(1.5)  # not the 30 s timeout
    assert info.value.path == ref.path
    assert info.value.reason is ref.exit_reason
    assert info.value.reason.kind is ExitKind.ERROR
    assert isinstance(info.value.reason.error, RuntimeError)
    assert "boom" in str(info.value)


async def test_callee_killed_mid_call_raises_actor_exited_at_once(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Crasher())
    start = trio.current_time()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            results = await call_in_background(nursery, ref, "hang", timeout=30)
            await trio.sleep(2)
            assert results == []
            reason = await ref.kill()
    assert trio.current_time() - start == pytest.approx(2.0)
    [result] = results
    with pytest.raises(ActorExited) as info:
        result.unwrap()
    assert info.value.reason is reason
    assert reason.kind is ExitKind.CANCELLED


async def test_queued_call_gets_actor_exited_when_the_callee_dies(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Crasher())
    start = trio.current_time()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            first = await call_in_background(nursery, ref, ("crash-after", 1), timeout=30)
            second = await call_in_background(nursery, ref, "queued behind", timeout=30)
    assert trio.current_time() - start == pytest.approx(1.0)
    for results in (first, second):
        with pytest.raises(ActorExited) as info:
            results[0].unwrap()
        assert info.value.reason is ref.exit_reason


async def test_call_to_a_dead_actor_raises_actor_exited_at_once(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Recorder())
    stopped = await ref.stop()
    start = trio.current_time()
    with pytest.raises(ActorExited) as info:
        await ref.call("hello?")
    assert trio.current_time() == start
    assert info.value.reason is stopped
    assert stopped.kind is ExitKind.SHUTDOWN
    assert f"actor {ref.path} exited" in str(info.value)


# == late replies ====================================================================


async def test_late_reply_is_discarded_and_not_delivered_to_a_later_call(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Slow()
    ref = await system.spawn(actor)
    start = trio.current_time()
    with trio.fail_after(60):
        with pytest.raises(CallTimeout):
            await ref.call(("sleep", 3.0, "first reply"), timeout=1.0)
        assert trio.current_time() - start == pytest.approx(1.0)
        assert await ref.call(("sleep", 0.5, "second reply")) == "second reply"
    assert trio.current_time() - start == pytest.approx(3.5)
    late = [d for d in system.dead_letters.recent if d.reason.startswith("late reply")]
    assert [d.message for d in late] == ["first reply"]
    assert system.dead_letters.by_reason["late reply (caller gave up)"] == 1


async def test_late_deferred_reply_is_a_dead_letter(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Deferring()
    ref = await system.spawn(actor)
    with trio.fail_after(60), pytest.raises(CallTimeout):
        await ref.call("get", timeout=1)
    await ref.call(("send", "too late"))
    assert actor.sent == [False]
    assert [(d.message, d.reason) for d in system.dead_letters.recent] == [
        ("too late", "late reply (caller gave up)")
    ]


# == calling oneself =================================================================


async def test_call_to_self_raises_call_to_self(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(SelfCaller())
    with trio.fail_after(60):
        error = await ref.call("go")
    assert isinstance(error, CallToSelf)
    assert error.path == ref.path
    assert ref.is_alive


# == deferred replies ================================================================


async def test_deferred_reply_is_sent_from_another_message(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Deferring()
    ref = await system.spawn(actor)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            results = await call_in_background(nursery, ref, "get")
            await trio.sleep(1)
            assert results == []  # the return value of receive was not the reply
            await ref.cast(("send", "later"))
    assert results[0].unwrap() == "later"
    assert actor.sent == [True]


async def test_deferred_reply_fail_raises_in_the_caller(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Deferring())
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            results = await call_in_background(nursery, ref, "get")
            await ref.cast(("fail", KeyError("no such thing")))
    with pytest.raises(KeyError, match="no such thing"):
        results[0].unwrap()
    assert ref.is_alive


@pytest.mark.parametrize("how", ["crash", "stop", "kill"])
async def test_pending_deferred_reply_gives_actor_exited_when_the_actor_dies(
    system: ActorSystem, autojump_clock: MockClock, how: str
) -> None:
    ref = await system.spawn(Deferring())
    start = trio.current_time()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            results = await call_in_background(nursery, ref, "get")
            if how == "crash":
                await ref.cast("crash")
            elif how == "stop":
                await ref.stop()
            else:
                await ref.kill()
    assert trio.current_time() == start
    with pytest.raises(ActorExited) as info:
        results[0].unwrap()
    assert info.value.reason is ref.exit_reason
    kinds = {"crash": ExitKind.ERROR, "stop": ExitKind.SHUTDOWN, "kill": ExitKind.CANCELLED}
    assert info.value.reason.kind is kinds[how]


async def test_deferred_reply_knows_when_the_caller_gave_up(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Deferring()
    ref = await system.spawn(actor)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            await call_in_background(nursery, ref, "get", timeout=1)
            [reply] = actor.waiting
            assert reply.caller_gave_up is False
            await trio.sleep(2)
    assert reply.caller_gave_up is True


async def test_defer_reply_outside_a_call_crashes_the_actor(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Deferring())
    await ref.cast("get")  # a cast has no reply to defer
    with trio.fail_after(60):
        reason = await ref.wait_exited()
    assert reason.kind is ExitKind.ERROR
    assert isinstance(reason.error, RuntimeError)
    assert "defer_reply() outside the handling of a call" in str(reason.error)


# == senders =========================================================================


async def test_sender_is_the_calling_actor(system: ActorSystem, autojump_clock: MockClock) -> None:
    server = await system.spawn(WhoSent())
    client = await system.spawn(Client())
    assert await client.call(("call", server)) == client


async def test_sender_of_a_cast_is_the_casting_actor(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = WhoSent()
    server = await system.spawn(actor)
    client = await system.spawn(Client())
    assert await client.call(("cast", server)) is True
    await server.call("sync")
    assert actor.senders == [client, None]


async def test_sender_is_none_outside_actors(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    server = await system.spawn(WhoSent())
    assert await server.call("who?") is None


# == backpressure and timeouts =======================================================


async def test_call_blocked_on_full_block_mailbox_honours_its_timeout(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Gated()
    ref = await system.spawn(actor, mailbox=MailboxConfig(1, Overflow.BLOCK))
    await ref.cast("hold")
    await trio.testing.wait_all_tasks_blocked()
    await ref.cast("filler")  # the mailbox is now full
    start = trio.current_time()
    with trio.fail_after(60), pytest.raises(CallTimeout):
        await ref.call("squeezed", timeout=2)
    assert trio.current_time() - start == pytest.approx(2.0)
    actor.gate.set()
    await trio.testing.wait_all_tasks_blocked()
    assert actor.log == ["hold", "filler"]  # the timed-out call was never queued


async def test_call_blocked_on_full_mailbox_gets_actor_exited_when_callee_dies(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Gated()
    ref = await system.spawn(actor, mailbox=MailboxConfig(1, Overflow.BLOCK))
    await ref.cast("hold")
    await trio.testing.wait_all_tasks_blocked()
    await ref.cast("filler")
    start = trio.current_time()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            results = await call_in_background(nursery, ref, "squeezed", timeout=30)
            assert results == []
            await trio.sleep(1)
            reason = await ref.kill()
    assert trio.current_time() - start == pytest.approx(1.0)
    with pytest.raises(ActorExited) as info:
        results[0].unwrap()
    assert info.value.reason is reason
    assert actor.log == ["hold"]


async def test_wait_for_space_counts_against_the_same_call_deadline(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Gated()
    ref = await system.spawn(actor, mailbox=MailboxConfig(1, Overflow.BLOCK))
    await ref.cast("hold")
    await trio.testing.wait_all_tasks_blocked()
    await ref.cast(("sleep", 4))
    start = trio.current_time()

    async def open_gate_later() -> None:
        await trio.sleep(1)
        actor.gate.set()

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(open_gate_later)
            with pytest.raises(CallTimeout):
                # Queued at t=1 behind a 4 s message: the 3 s deadline set at t=0 wins.
                await ref.call("squeezed", timeout=3)
    assert trio.current_time() - start == pytest.approx(3.0)
    await trio.sleep(5)
    assert actor.log == ["hold", ("sleep", 4), "squeezed"]
    assert system.dead_letters.by_reason["late reply (caller gave up)"] == 1


class CrashOnBoom(Actor):
    async def receive(self, message: Any) -> Any:
        if message == "boom":
            raise RuntimeError("boom")
        return message


async def test_actor_exited_says_whether_the_call_was_handled(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(CrashOnBoom())
    await ref.cast("boom")  # queued first; the call below waits behind it
    with pytest.raises(ActorExited) as queued:
        await ref.call("never handled")
    assert queued.value.handled is False
    assert queued.value.reason.kind is ExitKind.ERROR

    ref2 = await system.spawn(CrashOnBoom())
    with pytest.raises(ActorExited) as crashed:
        await ref2.call("boom")
    assert crashed.value.handled is True


class CallOrCast(Actor):
    def __init__(self) -> None:
        self.seen: list[tuple[str, bool]] = []

    async def receive(self, message: Any) -> Any:
        self.seen.append((message, self.ctx.handling_call))
        return message


async def test_an_actor_can_tell_a_call_from_a_cast(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = CallOrCast()
    ref = await system.spawn(actor)
    await ref.cast("cast")
    assert await ref.call("call") == "call"
    assert actor.seen == [("cast", False), ("call", True)]
