"""A running turn's controls: the session sends, the turn owns and reads at its seams.

``turn_link(capacity)`` makes the two ends. Nothing mutable is shared between
the session and the turn; what crosses goes through single-owner channels:

- ``TurnHandle`` is the session's (the sender). ``steer`` and ``redirect``
  put the text into the turn's bounded steer channel (``capacity`` items: a
  full one refuses at once with ``QueueFull``); a redirect, and an interrupt,
  also cut the model request in flight: the turn publishes that request's
  cancel scope while it runs (``TurnStatus.request``) and the handle cancels
  it, with no task of the turn's waiting for it. ``interrupt`` sets the
  interrupt event, a one-writer signal: only the handle sets it, the turn and
  its tools wait on it. The interrupt's reason stays with the handle (the
  session writes it into the result).
- ``TurnInbox`` is the turn's (the receiver, passed to it at spawn): it takes
  the steers at its seams and binds the scope of each model request
  (``requesting``; bound after an interrupt, it is cut at once). It also holds
  the turn's own state: its holds and the context size.
- ``TurnStatus`` is what the turn *publishes*: written only by the turn (a
  request in flight, interrupt holds), read by the session for its instant
  answers (``redirected`` or ``steered``; whether a new prompt may interrupt
  now), as ``hermes.subagents.ledger.Activity`` is for subagents.
- ``/compress`` and a change of the tool set go into a third channel
  (``CompressAsk``, ``ToolsChanged``) that the turn applies to its own
  ``ContextKeeper`` copy before each request: a changed tool set is a new
  ``ToolSnapshot`` (a value), offered and run from that request on.
- Once the turn's task has exited, the channels' remains are the session's:
  the handle reads them through its own receive ends (``leftovers``,
  ``leftover_asks``); until then only the turn receives.

A tool sees none of this: it gets the interrupt event in its ``ToolContext``,
a ``TurnUsage`` value (the context size when its batch started), and, by
declaring ``holds_interrupt``, the turn holds interrupts while it runs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import attrs
import trio

from hermes.bell import Bell
from hermes.model import TextBlock
from hermes.tools import ToolSnapshot

from .errors import QueueFull


@attrs.frozen(slots=True)
class Redirected:
    """A redirect's text in the steer channel (a steer if no request was cut for it)."""

    text: str


@attrs.frozen(slots=True)
class TurnUsage:
    """What a tool may know of its turn: the context's size when its batch started."""

    context_used: int = 0
    """Tokens of the context as of the turn's latest reply (prompt, cache and output)."""


class TurnStatus:
    """Published by the turn (its only writer), read by the session (see the module)."""

    __slots__ = ("holds", "request", "tools")

    def __init__(self) -> None:
        self.request: trio.CancelScope | None = None
        """The scope of the model request in flight (a redirect or an interrupt cancels it)."""
        self.holds = 0
        self.tools: Bell | None = None
        """The running tool batch's redirect bell: a redirect rings it (a foreground
        command moves to the background, ``hermes/processes/yielded.py``)."""
        """Work that must not be soft-interrupted by a new prompt (subagents, compression)."""


@attrs.frozen(slots=True)
class CompressAsk:
    """``/compress`` while the turn runs: compact before its next request."""

    focus: str | None = None


@attrs.frozen(slots=True)
class ToolsChanged:
    """The session's tool set changed (an MCP server added or removed tools, or was turned
    on or off here): the new set and the stable tier of the system prompt built for it,
    offered and run from the turn's next request on."""

    tools: ToolSnapshot
    stable: TextBlock


Steer = str | Redirected
Ask = CompressAsk | ToolsChanged

ASK_CAPACITY = 16
"""Requests (``/compress``, tool changes) that may wait for a turn's next seam."""


class TurnInbox:
    """The turn's end of its controls; only the turn calls it (see the module docstring)."""

    def __init__(
        self,
        steers: trio.MemoryReceiveChannel[Steer],
        interrupt: Bell,
        status: TurnStatus,
        asks: trio.MemoryReceiveChannel[Ask],
    ) -> None:
        self._steers = steers
        self._asks = asks
        self.interrupt = interrupt
        """Set by the session's handle only; the turn and its tools wait on it."""
        self.status = status
        self._taken: deque[str] = deque()
        """Steers received from the channel and not delivered yet."""
        self.context_used = 0
        """Tokens of the context as of the latest reply."""

    @property
    def interrupted(self) -> bool:
        return self.interrupt.is_set()

    @property
    def request_scope(self) -> trio.CancelScope | None:
        """The scope of the model request in flight (the turn's)."""
        return self.status.request

    def _receive(self) -> Iterator[Steer]:
        while True:
            try:
                yield self._steers.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                return

    def take_steers(self) -> list[str]:
        """The steers waiting, in order; a redirect that cut nothing counts as one."""
        taken = list(self._taken)
        self._taken.clear()
        taken.extend(s.text if isinstance(s, Redirected) else s for s in self._receive())
        return taken

    def take_redirects(self) -> list[str]:
        """After a cut: the redirects waiting (the steers stay for the next seam)."""
        redirects = []
        for item in self._receive():
            if isinstance(item, Redirected):
                redirects.append(item.text)
            else:
                self._taken.append(item)
        return redirects

    def take_asks(self) -> list[Ask]:
        """The requests waiting (``/compress``, tool changes), in order."""
        return _drain(self._asks)

    @contextmanager
    def requesting(self, scope: trio.CancelScope) -> Iterator[None]:
        """While entered, ``scope`` is the model request in flight: a redirect or an
        interrupt cancels it (one that came before, an interrupt, cuts it at once)."""
        self.status.request = scope
        if self.interrupt.is_set():
            scope.cancel()
        try:
            yield
        finally:
            self.status.request = None

    @contextmanager
    def running_tools(self) -> Iterator[Bell]:
        """While entered, a batch runs: a redirect rings the bell given (its own)."""
        self.status.tools = bell = Bell()
        try:
            yield bell
        finally:
            self.status.tools = None

    @contextmanager
    def hold_interrupt(self) -> Iterator[None]:
        """While entered, a new prompt in ``interrupt`` busy mode is queued instead."""
        self.status.holds += 1
        try:
            yield
        finally:
            self.status.holds -= 1


class TurnHandle:
    """The session's end of a running turn's controls: the verbs it sends, nothing more."""

    __slots__ = (
        "_asks",
        "_interrupt",
        "_left_asks",
        "_remains",
        "_status",
        "_steers",
        "capacity",
        "reason",
    )

    def __init__(
        self,
        capacity: int,
        steers: trio.MemorySendChannel[Steer],
        remains: trio.MemoryReceiveChannel[Steer],
        interrupt: Bell,
        status: TurnStatus,
        asks: tuple[trio.MemorySendChannel[Ask], trio.MemoryReceiveChannel[Ask]],
    ) -> None:
        self.capacity = capacity
        self._asks, self._left_asks = asks
        self._steers = steers
        self._remains = remains
        self._interrupt = interrupt
        self._status = status
        self.reason = ""
        """Why it was soft-interrupted (the first reason given), or empty."""

    def _send(self, item: Steer) -> None:
        try:
            self._steers.send_nowait(item)
        except trio.WouldBlock:
            raise QueueFull(f"{self.capacity} steers are already waiting for this turn") from None

    def _cut(self) -> None:
        """Cancel the model request in flight, if any (none: the turn's next seam sees
        the steer or the interrupt)."""
        scope = self._status.request
        if scope is not None:
            scope.cancel()

    def steer(self, text: str) -> None:
        """Queue ``text`` for the turn's next seam (``QueueFull`` past the capacity)."""
        self._send(text)

    def redirect(self, text: str) -> bool:
        """Cut the model request in flight and reissue it with ``text``; False (queued as
        a steer) when none is in flight."""
        if self._status.request is None:
            self._send(text)
            if self._status.tools is not None:
                self._status.tools.set()
            return False
        self._send(Redirected(text))
        self._cut()
        return True

    def interrupt(self, reason: str) -> None:
        """Soft-interrupt the turn: it ends at its next seam, ``interrupted``."""
        if not self._interrupt.is_set():
            self.reason = reason
            self._interrupt.set()
        self._cut()

    def compress(self, focus: str | None) -> None:
        """Ask the turn to compact before its next request (``/compress`` while busy)."""
        try:
            self._asks.send_nowait(CompressAsk(focus))
        except trio.WouldBlock:
            raise QueueFull(f"{ASK_CAPACITY} requests are already waiting for this turn") from None

    def tools_changed(self, tools: ToolSnapshot, stable: TextBlock) -> None:
        """Tell the turn the tool set changed (the session compares again at the turn's
        end, so one that finds the channel full is not lost, only late)."""
        with suppress(trio.WouldBlock):
            self._asks.send_nowait(ToolsChanged(tools, stable))

    def leftover_asks(self) -> list[Ask]:
        """The requests the turn did not take (once it has exited): the session's now."""
        left = _drain(self._left_asks)
        self._left_asks.close()
        return left

    @property
    def interruptible(self) -> bool:
        """False while the turn holds off interrupts (subagents or compression in flight)."""
        return self._status.holds == 0

    def leftovers(self) -> list[str]:
        """The steers sent after the turn settled (once it has exited): run as input."""
        left = []
        while True:
            try:
                item = self._remains.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            left.append(item.text if isinstance(item, Redirected) else item)
        self._remains.close()
        return left


def turn_link(capacity: int) -> tuple[TurnHandle, TurnInbox]:
    """The two ends of a new turn's controls: the session's handle, the turn's inbox."""
    send, receive = trio.open_memory_channel[Steer](capacity)
    ask, asks = trio.open_memory_channel[Ask](ASK_CAPACITY)
    interrupt, status = Bell(), TurnStatus()
    handle = TurnHandle(capacity, send, receive.clone(), interrupt, status, (ask, asks.clone()))
    return handle, TurnInbox(receive, interrupt, status, asks)


def _drain(channel: trio.MemoryReceiveChannel[Ask]) -> list[Ask]:
    taken = []
    while True:
        try:
            taken.append(channel.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return taken
