"""What a session tells its subscribers, and the bounded fan-out that carries it.

Every event is wrapped in a ``SessionEvent`` with the session id and a
per-session sequence number. Publishing never blocks the session: each
subscriber has its own bounded buffer; when it is full the subscriber loses
events (counted in ``lost``) and receives one ``EventsLost`` notice, with the
count, as soon as it has room again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import trio

from hermes.model.types import Usage

# -- payloads ----------------------------------------------------------------------------


@attrs.frozen(slots=True)
class TurnStarted:
    turn: int
    prompt: str


@attrs.frozen(slots=True)
class MessageStarted:
    turn: int
    iteration: int


@attrs.frozen(slots=True)
class TextDelta:
    turn: int
    text: str


@attrs.frozen(slots=True)
class ThinkingDelta:
    turn: int
    thinking: str


@attrs.frozen(slots=True)
class RequestRetried:
    """A model attempt failed and is retried (what it streamed so far is void)."""

    turn: int
    attempt: int
    reason: str
    delay: float


@attrs.frozen(slots=True)
class ReplyRecovering:
    """A reply was cut, empty or a loop, and the turn asks again (``ladders.py``).

    ``action``: ``continue`` (the cut text is kept, the model continues it),
    ``feed`` (a thinking-only reply is kept, with a nudge), ``nudge`` (an empty
    reply after tools is dropped, with a nudge) or ``retry`` (the reply is dropped).
    """

    turn: int
    action: str
    why: str


@attrs.frozen(slots=True)
class RecoveryWaiting:
    """The provider keeps failing: the turn waits ``delay`` s before cycle ``cycle`` of
    ``cycles`` (a soft interrupt or a redirect ends the wait at once)."""

    turn: int
    cycle: int
    cycles: int
    delay: float
    reason: str


@attrs.frozen(slots=True)
class MessageCompleted:
    """A message was persisted at ``seq`` (assistant replies, partial ones included)."""

    turn: int
    seq: int
    role: str
    text: str
    stop_reason: str
    tool_calls: int


@attrs.frozen(slots=True)
class ToolStarted:
    turn: int
    call_id: str
    name: str
    arguments: str = ""
    """The call's arguments in one short line (``hermes.tools.brief``), for display."""


@attrs.frozen(slots=True)
class ToolOutput:
    turn: int
    call_id: str
    name: str
    text: str


@attrs.frozen(slots=True)
class ToolCompleted:
    turn: int
    call_id: str
    name: str
    status: str
    is_error: bool
    chars: int


@attrs.frozen(slots=True)
class ApprovalRequested:
    """A dangerous command waits for a person: answer with ``respond_approval(id, choice)``."""

    turn: int
    request_id: int
    call_id: str
    command: str
    reasons: str
    timeout: float
    form: dict[str, Any] | None = attrs.field(default=None, eq=False)
    """A form to fill in (an MCP elicitation's JSON Schema): answer with ``content``."""


@attrs.frozen(slots=True)
class ApprovalResolved:
    request_id: int
    choice: str


@attrs.frozen(slots=True)
class SteerDelivered:
    turn: int
    text: str
    seq: int


@attrs.frozen(slots=True)
class InputQueued:
    """A prompt waits for the running turn to end (``position`` 1 = next)."""

    position: int
    text: str


@attrs.frozen(slots=True)
class ProcessNoticed:
    """A background process reported (pattern match, completion, breaker); ``text`` is the input."""

    kind: str
    process_id: str | None
    text: str


@attrs.frozen(slots=True)
class InputNoticed:
    """Input from the machine (not a person) arrived: ``source`` says which part sent it.

    Background processes publish ``ProcessNoticed`` instead; everything else that
    pushes input into a session (finished background delegations...) uses this.
    """

    source: str
    key: str | None
    text: str


@attrs.frozen(slots=True)
class UsageUpdated:
    """A reply's token usage, the turn's total, and how full the context is now."""

    turn: int
    usage: Usage
    total: Usage
    context_tokens: int = 0
    """The prompt plus this reply: the context the next request starts from."""
    context_percent: float = 0.0
    """``context_tokens`` as a percentage of the context window."""


@attrs.frozen(slots=True)
class ContextUsage:
    """How full the context is after a compaction (an estimate until the next reply,
    whose ``UsageUpdated`` carries the real figure)."""

    turn: int
    tokens: int
    window: int
    threshold: int
    """Automatic compaction starts at this many tokens."""
    percent: float
    """``tokens`` as a percentage of ``window``."""
    estimated: bool


@attrs.frozen(slots=True)
class CompactionStarted:
    """A compaction began: ``trigger`` is threshold, overflow or request (``/compress``)."""

    turn: int
    trigger: str
    tokens: int


@attrs.frozen(slots=True)
class CompactionCompleted:
    """A compaction committed; ``method`` says how its summary was made (model, static, prune)."""

    turn: int
    trigger: str
    method: str
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    archive_id: str
    """The archive session holding the replaced rows (search still finds them)."""
    detail: str


@attrs.frozen(slots=True)
class CompactionSkipped:
    """A compaction was due or asked for but did not happen, and why."""

    turn: int
    trigger: str
    reason: str


@attrs.frozen(slots=True)
class ContextBlocked:
    """The threat scan kept something out of the session's prompt as it was built (seeds
    #21, #142, #267): ``what`` (context file, identity, memory entry N of MEMORY.md,
    project skill NAME), its ``path``, the worst ``finding``, the ``notice`` standing in
    its place ("" when none does) and the ``effect`` (blocked, quarantined, loaded anyway)."""

    what: str
    path: str
    finding: str
    notice: str
    effect: str


@attrs.frozen(slots=True)
class ReviewStarted:
    """A background review began (after ``turn``, every ``interval`` user turns)."""

    turn: int


@attrs.frozen(slots=True)
class ReviewCompleted:
    """A background review ended: ``outcome`` is completed, cancelled or failed."""

    turn: int
    outcome: str
    added: int
    staged: int
    detail: str


@attrs.frozen(slots=True)
class ErrorOccurred:
    turn: int
    reason: str
    message: str


@attrs.frozen(slots=True)
class TurnCompleted:
    turn: int
    reason: str
    detail: str
    iterations: int
    text: str


@attrs.frozen(slots=True)
class EventsLost:
    """This subscriber fell behind and lost ``count`` events before this one."""

    count: int


@attrs.frozen(slots=True)
class SessionEvent:
    session: str
    seq: int
    payload: Any

    @property
    def type(self) -> str:
        return type(self.payload).__name__


# -- fan-out -----------------------------------------------------------------------------


class Subscriber:
    """One subscriber's bounded buffer; iterate ``receive`` to read events.

    When the buffer is full an event is lost and owed; the ``EventsLost``
    notice for what is owed comes next, as soon as there is room: before the
    next event offered, or, if none comes, once the reader has taken what the
    buffer held (so a reader that fell behind at a turn's last events still
    learns of them).
    """

    def __init__(self, capacity: int) -> None:
        self._send, channel = trio.open_memory_channel[SessionEvent](capacity)
        self.receive = SubscriberReceive(self, channel)
        self.lost = 0
        self._owed = 0
        self._last_lost: SessionEvent | None = None
        self.approvals = False

    def offer(self, event: SessionEvent) -> None:
        if self._owed:
            stats = self._send.statistics()
            if stats.current_buffer_used >= stats.max_buffer_size:
                self._owe(event)
                return
            self._send.send_nowait(self.take_owed(event.seq))
        try:
            self._send.send_nowait(event)
        except trio.WouldBlock:
            self._owe(event)

    def _owe(self, event: SessionEvent) -> None:
        self._owed += 1
        self.lost += 1
        self._last_lost = event

    @property
    def owed(self) -> int:
        """Events lost since the last ``EventsLost`` notice was handed out."""
        return self._owed

    def take_owed(self, seq: int | None = None) -> SessionEvent:
        """The ``EventsLost`` notice for what is owed (``seq``: the next event's, if any)."""
        last = self._last_lost
        assert last is not None and self._owed
        notice = SessionEvent(
            last.session, last.seq if seq is None else seq, EventsLost(self._owed)
        )
        self._owed = 0
        return notice

    def drain(self) -> list[SessionEvent]:
        """Everything buffered now, without waiting."""
        out: list[SessionEvent] = []
        while True:
            try:
                out.append(self.receive.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel):
                return out

    def close(self) -> None:
        self._send.close()


class SubscriberReceive:
    """A subscriber's receiving end: its buffer, then the notice it is owed (see ``Subscriber``)."""

    def __init__(
        self, subscriber: Subscriber, channel: trio.MemoryReceiveChannel[SessionEvent]
    ) -> None:
        self._subscriber = subscriber
        self._channel = channel

    def statistics(self) -> trio.MemoryChannelStatistics:
        """The buffer's statistics (``current_buffer_used``: events waiting)."""
        return self._channel.statistics()

    def receive_nowait(self) -> SessionEvent:
        """The next event; ``WouldBlock`` when none waits, ``EndOfChannel`` once closed."""
        sub = self._subscriber
        if sub.owed and not self._channel.statistics().current_buffer_used:
            return sub.take_owed()
        return self._channel.receive_nowait()

    async def receive(self) -> SessionEvent:
        """The next event, waiting for one (``EndOfChannel`` once closed and drained)."""
        if self._subscriber.owed and not self._channel.statistics().current_buffer_used:
            await trio.lowlevel.checkpoint()
            return self._subscriber.take_owed()
        return await self._channel.receive()

    def __aiter__(self) -> SubscriberReceive:
        return self

    async def __anext__(self) -> SessionEvent:
        try:
            return await self.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None


Observer = Callable[[SessionEvent], None]
"""Called synchronously with every published event; must not block or raise."""


class EventHub:
    """Numbers a session's events and offers each to every subscriber; never blocks.

    Observers (``observe``) are called in line with every event, before the
    subscribers: a parent's subagent supervisor tracks a child's progress this
    way without a task or a buffer per child.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.seq = 0
        self._subscribers: list[Subscriber] = []
        self._observers: list[Observer] = []

    def observe(self, observer: Observer) -> None:
        """Call ``observer(event)`` for every event published from now on."""
        self._observers.append(observer)

    @contextmanager
    def subscribe(self, capacity: int = 1000, *, approvals: bool = False) -> Iterator[Subscriber]:
        """Events published while the block is open; ``approvals`` attaches an approver."""
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"subscription capacity must be an integer >= 1, got {capacity!r}")
        sub = Subscriber(capacity)
        sub.approvals = approvals
        self._subscribers.append(sub)
        try:
            yield sub
        finally:
            self._subscribers.remove(sub)
            sub.close()

    @property
    def approvers(self) -> int:
        """How many subscribers can answer approval requests."""
        return sum(1 for s in self._subscribers if s.approvals)

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    def publish(self, payload: Any) -> SessionEvent:
        self.seq += 1
        event = SessionEvent(self.session_id, self.seq, payload)
        for observer in self._observers:
            observer(event)
        for sub in self._subscribers:
            sub.offer(event)
        return event
