"""Auto-recovery cycles through a session (issue 24, item 4; seed #159).

The wait lengths are covered on trio's clock in ``tests/hermes/model/test_recovery.py``;
here the session announces each cycle, answers after the provider recovers, and
a soft interrupt ends a 15 s wait at once. The transcript stays valid.
"""

from __future__ import annotations

import pytest
import trio

from hermes.fake import ErrorReply, FailFirst, FakeProvider, Reply
from hermes.model.recovery import RecoveryPolicy
from hermes.session import TurnEnd
from hermes.store import StoreClient

from ..fake_model import STRICT, FakeSetup
from .conftest import SessionFactory
from .control_helpers import next_event, turn_completed
from .helpers import assert_valid, payloads


@pytest.fixture
def fake_setup() -> FakeSetup:
    return STRICT


async def test_an_overloaded_provider_recovers_on_the_third_cycle(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_session(recovery=RecoveryPolicy(waits=(0.01, 0.02, 0.04)))
    # The client makes 3 attempts a call: the call and two cycles fail, the third answers.
    fake.enqueue(FailFirst(9, ErrorReply(529, retry_after_ms=1), then=Reply.of("back")))
    with session.subscribe() as sub, trio.fail_after(20):
        result = await session.run("hello")
        events = sub.drain()
    assert result.reason is TurnEnd.COMPLETED and result.text == "back"
    waits = payloads(events, "RecoveryWaiting")
    assert [(w.cycle, w.cycles, w.reason) for w in waits] == [
        (1, 5, "overloaded"),
        (2, 5, "overloaded"),
        (3, 5, "overloaded"),
    ]
    assert len(fake.message_requests) == 10
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.text() for m in transcript.messages] == ["hello", "back"]


async def test_spent_cycles_fail_the_turn_with_a_status_line(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_session(recovery=RecoveryPolicy(cycles=2, waits=(0.01,)))
    fake.when(ErrorReply(529, retry_after_ms=1))
    with session.subscribe() as sub, trio.fail_after(20):
        result = await session.run("hello")
        events = sub.drain()
    assert result.reason is TurnEnd.FAILED
    assert "gave up after 2 auto-recovery cycles" in result.detail
    assert len(payloads(events, "RecoveryWaiting")) == 2
    assert_valid(await store.load(session.id))


async def test_an_interrupt_ends_a_recovery_wait_at_once(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_session()  # the default waits: 15 s first
    fake.when(ErrorReply(529))  # no Retry-After: it would set the wait
    with session.subscribe() as sub, trio.fail_after(20):
        await session.prompt("hello")
        waiting = await next_event(sub, "RecoveryWaiting")
        assert waiting.payload.delay >= 13.5
        start = trio.current_time()
        await session.interrupt("stop waiting")
        done = await turn_completed(sub, 1)
        took = trio.current_time() - start
    assert done.reason == TurnEnd.INTERRUPTED.value
    assert took < 2.0  # not the 15 s wait
    requests = len(fake.message_requests)
    assert_valid(await store.load(session.id))
    await trio.sleep(0.2)
    assert len(fake.message_requests) == requests  # nothing called the provider again


async def test_zero_cycles_fail_at_once(open_session: SessionFactory, fake: FakeProvider) -> None:
    session = await open_session(recovery=RecoveryPolicy(cycles=0))
    fake.when(ErrorReply(529, retry_after_ms=1))
    with session.subscribe() as sub, trio.fail_after(20):
        result = await session.run("hello")
        events = sub.drain()
    assert result.reason is TurnEnd.FAILED and "auto-recovery" not in result.detail
    assert payloads(events, "RecoveryWaiting") == []
