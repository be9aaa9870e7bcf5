"""A turn's controls as two ends (``control.turn_link``): what the session sends, the turn takes."""

from __future__ import annotations

import pytest
import trio

from hermes.model import TextBlock
from hermes.session import QueueFull
from hermes.session.control import CompressAsk, ToolsChanged, turn_link


def test_steers_wait_in_a_bounded_channel_and_a_full_one_refuses_at_once() -> None:
    handle, inbox = turn_link(2)
    handle.steer("one")
    assert handle.redirect("two") is False  # no request in flight: a steer
    with pytest.raises(QueueFull, match="2 steers"):
        handle.steer("three")
    assert inbox.take_steers() == ["one", "two"]
    handle.steer("four")  # taken at a seam: room again
    assert inbox.take_steers() == ["four"]


async def test_a_redirect_cuts_the_request_in_flight() -> None:
    handle, inbox = turn_link(4)
    with trio.fail_after(5), trio.CancelScope() as scope, inbox.requesting(scope):
        handle.steer("kept for the next seam")
        assert handle.redirect("say it again") is True
        await trio.sleep_forever()  # cut by the redirect, no task of the turn's needed
    assert scope.cancelled_caught
    assert inbox.status.request is None
    assert inbox.take_redirects() == ["say it again"]
    assert inbox.take_steers() == ["kept for the next seam"]


async def test_an_interrupt_cuts_the_request_in_flight_and_one_bound_after_it() -> None:
    handle, inbox = turn_link(4)
    with trio.fail_after(5), trio.CancelScope() as scope, inbox.requesting(scope):
        handle.interrupt("stop")
        await trio.sleep_forever()
    assert scope.cancelled_caught
    with trio.fail_after(5), trio.CancelScope() as later, inbox.requesting(later):
        await trio.sleep_forever()  # bound after the interrupt: cut at once
    assert later.cancelled_caught


def test_an_interrupt_is_an_event_only_the_handle_sets_and_its_reason_stays_there() -> None:
    handle, inbox = turn_link(4)
    handle.interrupt("first")
    handle.interrupt("second")
    assert inbox.interrupted and handle.reason == "first"


def test_holds_are_published_by_the_turn_and_read_by_the_session() -> None:
    handle, inbox = turn_link(4)
    with inbox.hold_interrupt():
        assert not handle.interruptible
    assert handle.interruptible


def test_what_the_turn_did_not_take_is_the_sessions_once_it_has_exited() -> None:
    handle, inbox = turn_link(4)
    handle.compress("the tests")
    stable = TextBlock("tools")
    handle.tools_changed((), stable)
    assert inbox.take_asks() == [CompressAsk("the tests"), ToolsChanged((), stable)]
    handle.compress(None)
    handle.steer("late")
    assert handle.leftover_asks() == [CompressAsk(None)]
    assert handle.leftovers() == ["late"]
