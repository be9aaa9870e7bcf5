"""The memory review's counter as Hermes keeps it (issue 24, item 6; seed #261).

Every user turn counts, an interrupted one too; a direct memory write starts
the count again; a resumed session counts from its earlier user turns.
"""

from __future__ import annotations

import trio

from hermes.fake import FakeProvider, Reply, Text
from hermes.memory import MemoryStore
from hermes.review import ReviewSettings
from hermes.session import TurnEnd

from ..conftest import SessionFactory
from ..control_helpers import next_event, text_deltas, turn_completed
from .conftest import NOTHING, add, is_review, review_done, review_requests


async def test_a_direct_memory_write_starts_the_count_again(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    fake.when(NOTHING, predicate=is_review)
    session = await open_reviewing(review=ReviewSettings(interval=2))
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("A plain answer."))
        await session.run("one")
        fake.enqueue(Reply.of(add("Uses fish.", target="user")), Reply.of("Saved it myself."))
        await session.run("two: remember that I use fish")
        after_write = await session.state()
        fake.enqueue(Reply.of("Three."))
        await session.run("three")
        after_three = await session.state()
        fake.enqueue(Reply.of("Four."))
        await session.run("four")
        started = await next_event(sub, "ReviewStarted")
        await review_done(sub)

    assert memory.entries("user") == ["Uses fish."]
    assert not after_write.reviewing and not after_three.reviewing  # the write reset it
    assert started.payload.turn == 4  # two user turns after the write
    assert len(review_requests(fake)) == 1


async def test_a_resumed_session_counts_from_its_earlier_user_turns(
    open_reviewing: SessionFactory, fake: FakeProvider
) -> None:
    fake.when(NOTHING, predicate=is_review)
    settings = ReviewSettings(interval=3)
    session = await open_reviewing(review=settings)
    with trio.fail_after(10):
        fake.enqueue(Reply.of("One."), Reply.of("Two."))
        await session.run("one")
        await session.run("two")
        await session.close("the daemon stops")
    assert review_requests(fake) == []

    resumed = await open_reviewing(session_id=session.id, review=settings)
    with trio.fail_after(10), resumed.subscribe() as sub:
        fake.enqueue(Reply.of("Three."))
        await resumed.run("three")  # the third user turn of the session: due
        started = await next_event(sub, "ReviewStarted")
        await review_done(sub)
    assert started.payload.turn == 1  # the resumed session's first turn
    assert len(review_requests(fake)) == 1


async def test_interrupted_user_turns_count_towards_a_review(
    open_reviewing: SessionFactory, fake: FakeProvider
) -> None:
    fake.when(NOTHING, predicate=is_review)
    session = await open_reviewing(review=ReviewSettings(interval=2))
    slow = Text(deltas=tuple(f"word{i} " for i in range(400)))
    with trio.fail_after(30), session.subscribe() as sub:
        for number in (1, 2):
            fake.enqueue(Reply.of(slow, event_delay=0.01))
            await session.prompt(f"write a long answer {number}")
            await text_deltas(sub, 2)
            await session.interrupt("enough")
            done = await turn_completed(sub, number)
            assert done.reason == TurnEnd.INTERRUPTED.value
        started = await next_event(sub, "ReviewStarted")
        await review_done(sub)
    assert started.payload.turn == 2  # two interrupted user turns made it due
    assert len(review_requests(fake)) == 1
