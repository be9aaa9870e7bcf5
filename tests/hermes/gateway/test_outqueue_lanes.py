"""The out queue's urgent lane: a control answer is written before queued event traffic."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from hermes.gateway.outqueue import OutQueue
from hermes.gateway.ws_client import CONTROL


def drain(queue: OutQueue) -> list[str | bytes]:
    out = []
    while True:
        try:
            out.append(queue.get_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return out


async def test_a_control_answer_is_served_before_queued_events() -> None:
    queue = OutQueue(max_bytes=1 << 20, max_frames=256)
    for i in range(100):
        await queue.put(f"event {i}")
    await queue.put("cancel answer", urgent=True)
    await queue.put("event 100")
    assert await queue.get() == "cancel answer"
    assert drain(queue) == [f"event {i}" for i in range(101)]  # events keep their order


async def test_an_urgent_put_does_not_wait_for_room_among_events() -> None:
    queue = OutQueue(max_bytes=65536, max_frames=4)
    for i in range(4):
        await queue.put(f"event {i}")
    with trio.fail_after(5):
        await queue.put("status answer", urgent=True)  # the ordinary lane is full
    blocked = trio.Event()

    async def one_more_event() -> None:
        blocked.set()
        await queue.put("event 4")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one_more_event)
        await blocked.wait()
        await trio.testing.wait_all_tasks_blocked()
        assert len(queue) == 5  # the event waits for room; the answer did not
        assert queue.get_nowait() == "status answer"
        assert queue.get_nowait() == "event 0"  # room: the waiting event goes in
    assert drain(queue) == ["event 1", "event 2", "event 3", "event 4"]


async def test_the_urgent_lane_is_bounded_too() -> None:
    queue = OutQueue(max_bytes=65536, max_frames=2)
    await queue.put("a", urgent=True)
    await queue.put("b", urgent=True)
    with trio.move_on_after(0.2) as scope:  # a bound, not a wait for an event
        await queue.put("c", urgent=True)
    assert scope.cancelled_caught and len(queue) == 2
    assert queue.bytes == 2 and queue.peak_bytes == 2


async def test_closing_frames_go_after_everything_and_puts_are_refused() -> None:
    queue = OutQueue(max_bytes=65536, max_frames=8)
    await queue.put("event")
    await queue.put("answer", urgent=True)
    queue.put_nowait("closing notice")
    queue.close()
    with pytest.raises(trio.ClosedResourceError):
        await queue.put("late", urgent=True)
    assert drain(queue) == ["answer", "event", "closing notice"]
    with pytest.raises(trio.EndOfChannel):
        await queue.get()


def test_the_control_verbs_are_the_issues() -> None:
    assert {"cancel", "interrupt", "steer", "daemon.status", "approval.respond"} <= CONTROL
    assert "prompt.submit" not in CONTROL and "events.unsubscribe" not in CONTROL
