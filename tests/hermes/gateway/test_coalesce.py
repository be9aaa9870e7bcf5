"""Text deltas are merged for a client that is behind, never for one that keeps up."""

from __future__ import annotations

import trio

from hermes.gateway.coalesce import WINDOW, next_events
from hermes.session import SessionEvent
from hermes.session.events import TextDelta, TurnCompleted


def delta(seq: int, text: str, turn: int = 1) -> SessionEvent:
    return SessionEvent("s", seq, TextDelta(turn, text))


async def test_a_client_that_keeps_up_gets_each_delta_as_published() -> None:
    send, receive = trio.open_memory_channel[SessionEvent](16)
    async with trio.open_nursery() as nursery:

        async def publish() -> None:
            for seq in range(3):
                await trio.sleep(0.01)
                send.send_nowait(delta(seq, f"d{seq}"))

        nursery.start_soon(publish)
        with trio.fail_after(2):
            got = [await next_events(receive) for _ in range(3)]
    assert got == [[delta(0, "d0")], [delta(1, "d1")], [delta(2, "d2")]]


async def test_a_client_behind_gets_its_backlog_and_the_next_window_merged() -> None:
    send, receive = trio.open_memory_channel[SessionEvent](64)
    for seq, text in enumerate(["a", "b", "c"]):
        send.send_nowait(delta(seq, text))
    async with trio.open_nursery() as nursery:

        async def publish() -> None:  # more deltas inside the window, then the turn ends
            for seq, text in ((3, "d"), (4, "e")):
                await trio.sleep(WINDOW / 5)
                send.send_nowait(delta(seq, text))
            await trio.sleep(WINDOW / 5)
            send.send_nowait(SessionEvent("s", 5, TurnCompleted(1, "completed", "", 0, "abcde")))
            send.send_nowait(delta(6, "next turn", turn=2))

        nursery.start_soon(publish)
        with trio.fail_after(2):
            got = await next_events(receive)
    # The deltas of the window in one frame with the seq of its last part; the
    # window closes at the first other event, which is sent as it is.
    assert got == [
        delta(4, "abcde"),
        SessionEvent("s", 5, TurnCompleted(1, "completed", "", 0, "abcde")),
        delta(6, "next turn", turn=2),
    ]


async def test_deltas_of_different_turns_are_never_merged() -> None:
    send, receive = trio.open_memory_channel[SessionEvent](8)
    send.send_nowait(delta(0, "x", turn=1))
    send.send_nowait(delta(1, "y", turn=2))
    send.close()
    with trio.fail_after(2):
        got = await next_events(receive)
    assert got == [delta(0, "x", turn=1), delta(1, "y", turn=2)]
