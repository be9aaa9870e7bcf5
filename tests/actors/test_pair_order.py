"""Per-pair ordering: what one actor sends another arrives in order, and the ``Down``,
``Exit`` or ``TaskEnded`` that reports an end never overtakes a message sent before it.

The receiver is kept busy (a handler parked on an event) while the sender sends and
ends, so that everything queues up; then it is released and reports what it saw.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st
from trio.testing import MockClock

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    Down,
    Exit,
    ExitKind,
    MailboxConfig,
    MailboxFull,
    Overflow,
    TaskEnded,
)
from actors._envelope import Envelope
from actors._mailbox import Mailbox


class Recorder(Actor):
    """Records ``("m", sender, i)`` messages and notices; parks on ``("hold", event)``."""

    def __init__(self, trap: bool = False) -> None:
        self.trap_exits = trap
        self.seen: list[Any] = []
        self.depth_after_call: int | None = None

    async def receive(self, message: Any) -> Any:
        match message:
            case Down() | Exit() | TaskEnded() | ("m", _, _):
                self.seen.append(message)
            case "seen":
                return list(self.seen)
            case ("hold", trio.Event() as event):
                await event.wait()
            case ("hold-then-monitor", event, target):
                await event.wait()
                return self.ctx.monitor(target)
            case ("hold-then-link", event, target):
                await event.wait()
                self.ctx.link(target)
            case ("hold-then-demonitor", event, mref):
                await event.wait()
                self.ctx.demonitor(mref, flush=True)
            case ("monitor", target):
                return self.ctx.monitor(target)
            case ("link", target):
                self.ctx.link(target)
            case ("spawn-sender", name):
                return await self.ctx.spawn(Sender(), name=name)
            case ("task-sends", n):
                me = self.ctx.self

                async def send() -> None:
                    for i in range(n):
                        await me.cast(("m", "task", i))

                task = self.ctx.start_task(send, name="sender", notify=True)
                await task.wait()  # still busy: the casts and the notice queue up
            case ("call-then-note-depth", target, n):
                reply = await target.call(("cast-back", n))
                self.depth_after_call = self.ctx.mailbox_depth
                self.seen.append(("reply", reply))
            case _:
                return message
        return None


class Sender(Actor):
    """Casts ``("m", name, i)`` to a target, then ends the way it is asked to."""

    def __init__(self) -> None:
        self.got: list[Any] = []

    async def receive(self, message: Any) -> Any:
        match message:
            case ("send", target, n, how):
                for i in range(n):
                    if i % 2:
                        target.cast_nowait(("m", self.ctx.path, i))
                    else:
                        await target.cast(("m", self.ctx.path, i))
                if how == "crash":
                    raise RuntimeError("crashed after sending")
                if how == "stop":
                    self.ctx.stop()
            case ("cast-back", n):
                sender = self.ctx.sender
                assert sender is not None
                for i in range(n):
                    await sender.cast(("m", self.ctx.path, i))
                return "answer"
            case "got":
                return list(self.got)
            case _:
                self.got.append(message)
                return message
        return None


def labels(seen: list[Any]) -> list[Any]:
    """Messages as ``i`` and notices by their class name."""
    return [item[2] if isinstance(item, tuple) else type(item).__name__ for item in seen]


async def end_after_sending(sender: ActorRef, target: ActorRef, n: int, how: str) -> None:
    if how == "kill":
        await sender.call(("send", target, n, "none"))
        await sender.kill()
    else:
        await sender.cast(("send", target, n, how))
        await sender.wait_exited()


@pytest.mark.parametrize("how", ["crash", "stop", "kill"])
async def test_down_comes_after_every_message_the_dead_actor_sent(
    system: ActorSystem, autojump_clock: MockClock, how: str
) -> None:
    watcher = await system.spawn(Recorder())
    sender = await system.spawn(Sender())
    await watcher.call(("monitor", sender))
    release = trio.Event()
    await watcher.cast(("hold", release))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await end_after_sending(sender, watcher, 5, how)
    release.set()
    seen = await watcher.call("seen")
    assert labels(seen) == [0, 1, 2, 3, 4, "Down"]
    assert seen[-1].actor == sender
    expected = {"crash": ExitKind.ERROR, "stop": ExitKind.NORMAL, "kill": ExitKind.CANCELLED}
    assert seen[-1].reason.kind is expected[how]


@pytest.mark.parametrize("how", ["crash", "kill"])
async def test_a_trapped_exit_comes_after_every_message_the_linked_actor_sent(
    system: ActorSystem, autojump_clock: MockClock, how: str
) -> None:
    watcher = await system.spawn(Recorder(trap=True))
    sender = await system.spawn(Sender())
    await watcher.call(("link", sender))
    release = trio.Event()
    await watcher.cast(("hold", release))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await end_after_sending(sender, watcher, 5, how)
    release.set()
    seen = await watcher.call("seen")
    assert labels(seen) == [0, 1, 2, 3, 4, "Exit"]
    assert seen[-1].actor == sender


async def test_a_parent_sees_its_childs_messages_before_its_exit(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    parent = await system.spawn(Recorder(trap=True))
    child = await parent.call(("spawn-sender", "child"))
    release = trio.Event()
    await parent.cast(("hold", release))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await end_after_sending(child, parent, 4, "crash")
    release.set()
    seen = await parent.call("seen")
    assert labels(seen) == [0, 1, 2, 3, "Exit"]
    assert seen[-1].reason.kind is ExitKind.ERROR


async def test_monitoring_an_actor_already_dead_gives_noproc_after_its_messages(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    watcher = await system.spawn(Recorder())
    sender = await system.spawn(Sender())
    release = trio.Event()
    await watcher.cast(("hold-then-monitor", release, sender))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await end_after_sending(sender, watcher, 3, "crash")
    release.set()
    seen = await watcher.call("seen")
    assert labels(seen) == [0, 1, 2, "Down"]
    assert seen[-1].reason.kind is ExitKind.NOPROC


async def test_linking_to_an_actor_already_dead_gives_noproc_after_its_messages(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    watcher = await system.spawn(Recorder(trap=True))
    sender = await system.spawn(Sender())
    release = trio.Event()
    await watcher.cast(("hold-then-link", release, sender))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await end_after_sending(sender, watcher, 3, "crash")
    release.set()
    seen = await watcher.call("seen")
    assert labels(seen) == [0, 1, 2, "Exit"]


async def test_task_ended_comes_after_what_the_task_sent_its_actor(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    ref = await system.spawn(Recorder())
    await ref.call(("task-sends", 4))
    seen = await ref.call("seen")
    assert labels(seen) == [0, 1, 2, 3, "TaskEnded"]


async def test_a_down_behind_messages_is_still_flushed_by_demonitor(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    watcher = await system.spawn(Recorder())
    sender = await system.spawn(Sender())
    mref = await watcher.call(("monitor", sender))
    release = trio.Event()
    await watcher.cast(("hold-then-demonitor", release, mref))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await end_after_sending(sender, watcher, 3, "crash")
    release.set()
    assert labels(await watcher.call("seen")) == [0, 1, 2]


async def test_a_down_behind_a_dropped_message_is_delivered_once(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Recorder()
    watcher = await system.spawn(actor, mailbox=MailboxConfig(3, Overflow.DROP_OLDEST))
    sender = await system.spawn(Sender())
    await watcher.call(("monitor", sender))
    release = trio.Event()
    await watcher.cast(("hold", release))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    await end_after_sending(sender, watcher, 3, "crash")
    for i in range(3):  # push every message of the dead sender out of the lane
        await watcher.cast(("m", "test", 10 + i))
    release.set()
    await trio.testing.wait_all_tasks_blocked()  # a call would push one more out
    assert labels(actor.seen) == ["Down", 10, 11, 12]


async def test_casts_then_a_call_from_one_sender_are_handled_in_order(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    target = await system.spawn(Sender())
    for i in range(5):
        await target.cast(i)
    assert await target.call("last") == "last"
    assert await target.call("got") == [0, 1, 2, 3, 4, "last"]


async def test_casts_a_callee_sent_before_replying_are_queued_when_the_reply_arrives(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    actor = Recorder()
    caller = await system.spawn(actor)
    callee = await system.spawn(Sender())
    await caller.call(("call-then-note-depth", callee, 3))
    seen = await caller.call("seen")
    assert actor.depth_after_call == 3
    assert seen[0] == ("reply", "answer")
    assert [item[2] for item in seen[1:]] == [0, 1, 2]


async def test_many_senders_each_arrive_in_order_and_before_their_down(
    system: ActorSystem, autojump_clock: MockClock
) -> None:
    rng = random.Random(20)
    watcher = await system.spawn(Recorder())
    senders = [await system.spawn(Sender(), name=f"s{k}") for k in range(6)]
    for sender in senders:
        await watcher.call(("monitor", sender))
    release = trio.Event()
    await watcher.cast(("hold", release))
    await trio.testing.wait_all_tasks_blocked()  # it is holding
    counts = {sender.path: rng.randint(0, 6) for sender in senders}
    async with trio.open_nursery() as nursery:
        for sender in senders:
            how = rng.choice(["crash", "stop", "kill"])
            nursery.start_soon(end_after_sending, sender, watcher, counts[sender.path], how)
    release.set()
    seen = await watcher.call("seen")
    for sender in senders:
        mine = [
            item
            for item in seen
            if (isinstance(item, tuple) and item[1] == sender.path)
            or (isinstance(item, Down) and item.actor == sender)
        ]
        assert labels(mine) == [*range(counts[sender.path]), "Down"], sender.path


# == the mechanism, on a bare mailbox ================================================


class _From:
    """Stands in for a sender's ref: the mailbox only reads its ``id``."""

    def __init__(self, actor_id: int) -> None:
        self.id = actor_id


def _drops(envelope: Envelope, reason: str) -> None:
    del envelope, reason


def test_a_notice_waits_behind_the_last_message_of_its_actor_only() -> None:
    mailbox = Mailbox("/m", MailboxConfig(10), _drops)
    for message, sender in (("a1", 1), ("b1", 2), ("a2", 1), ("b2", 2)):
        mailbox.put_nowait(Envelope(message, _From(sender)))  # type: ignore[arg-type]
    assert mailbox.put_notice("down-a", (1,))
    assert mailbox.put_notice("down-c", (3,))  # nothing from 3 queued: served first
    assert (mailbox.depth, mailbox.system_depth) == (4, 2)
    taken = []
    while (item := mailbox.get_nowait()) is not None:
        taken.append(item.message if isinstance(item, Envelope) else item)
    assert taken == ["down-c", "a1", "b1", "a2", "down-a", "b2"]


def test_closing_returns_held_envelopes_unwrapped() -> None:
    mailbox = Mailbox("/m", MailboxConfig(10), _drops)
    mailbox.put_nowait(Envelope("a1", _From(1)))  # type: ignore[arg-type]
    mailbox.put_notice("down-a", (1,))
    assert [e.message for e in mailbox.close()] == ["a1"]
    assert mailbox.put_notice("late", (1,)) is False


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(0, 3)),
        st.tuples(st.just("notice"), st.integers(0, 3)),
        st.tuples(st.just("get"), st.just(0)),
        st.tuples(st.just("remove"), st.integers(0, 3)),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(ops=_ops, capacity=st.integers(1, 6), overflow=st.sampled_from(list(Overflow)))
def test_no_notice_overtakes_a_message_of_its_actor(
    ops: list[tuple[str, int]], capacity: int, overflow: Overflow
) -> None:
    """Whatever the interleaving and overflow policy: per sender, what is taken keeps
    the order it was put in, and every notice not removed is taken exactly once."""
    dropped: list[Any] = []
    mailbox = Mailbox("/m", MailboxConfig(capacity, overflow), lambda e, _: dropped.append(e))
    put: dict[int, list[Any]] = {k: [] for k in range(4)}
    taken: list[Any] = []
    removed: list[Any] = []

    def take() -> None:
        got = mailbox.get_nowait()
        if got is not None:
            taken.append(got.message if isinstance(got, Envelope) else got)

    for serial, (op, k) in enumerate(ops):
        if op == "put":
            message = ("m", k, serial)
            envelope = Envelope(message, _From(k))  # type: ignore[arg-type]
            try:
                if mailbox.put_nowait(envelope, block_raises=False):
                    put[k].append(message)
            except MailboxFull:  # FAIL refuses it: never queued
                pass
        elif op == "notice":
            notice = ("n", k, serial)
            assert mailbox.put_notice(notice, (k,))
            put[k].append(notice)
        elif op == "remove":

            def about(item: Any, k: int = k) -> bool:
                if item[:2] == ("n", k):
                    removed.append(item)
                    return True
                return False

            mailbox.remove_first_system(about)
        else:
            take()
    while mailbox.depth or mailbox.system_depth:
        take()
    lost = {e.message for e in dropped} | set(removed)
    for k, items in put.items():
        assert [i for i in taken if i[1] == k] == [i for i in items if i not in lost]
    assert len(taken) == len(set(taken))
