"""What the fake provider saw: one ``RequestRecord`` per HTTP request, and its outcome.

Each record carries two clocks: ``trio.current_time()`` (for tests on a trio
clock) and ``time.monotonic()`` (for real-time assertions such as "the server
saw the disconnect within 50 ms of the client's cancel").
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import trio


class Outcome(enum.Enum):
    """How a request's exchange ended."""

    #: The whole response (including any scripted error status) was sent.
    COMPLETED = "completed"
    #: The client closed or reset the connection before the response was complete.
    CLIENT_CLOSED = "client closed"
    #: A scripted ``Reset`` fault: the server aborted the connection with a TCP RST.
    RESET_BY_SERVER = "reset by server"
    #: A scripted ``Truncate`` fault: the body ended early (cleanly for SSE).
    TRUNCATED_BY_SERVER = "truncated by server"
    #: A scripted ``Hang(close_after=...)``: the server closed without a response.
    CLOSED_BY_SERVER = "closed by server"
    #: The provider shut down while the request was in flight.
    SERVER_SHUTDOWN = "server shutdown"
    #: The fake itself failed (bug, or a scripted responder raised); see ``error``.
    SERVER_ERROR = "server error"


class RequestRecord:
    """One HTTP request as the fake provider saw it (mutable; filled in as it goes).

    Attributes:
        seq: 1-based arrival number within the provider.
        request_id: the ``request-id`` header value sent back (``req_fake_...``).
        method, path: from the request line (``path`` without the query string).
        raw_headers: the request headers as h11 gives them (lowercased names, bytes).
        raw_body: the request body bytes.
        body: the parsed JSON body, or ``None`` if it was empty or not valid JSON.
        started_at, started_monotonic: when the request headers arrived
            (``trio.current_time()`` and ``time.monotonic()``).
        status: the HTTP status sent, or ``None`` if no headers were sent.
        responder: a short label of what answered (``"reply"``, ``"error"``,
            ``"hang"``, ``"endless"``, ``"demo"``, ``"auth"``, ...).
        events_sent: SSE events written (0 for JSON responses).
        completed_at, completed_monotonic: when the full response was written.
        disconnected_at, disconnected_monotonic: when the server saw the client
            close the connection while the response was still in progress.
        ended_at, ended_monotonic: when the exchange ended, for any reason.
        outcome: how it ended (``None`` while in flight).
        error: the exception if the outcome is ``SERVER_ERROR``.
    """

    __slots__ = (
        "_ended_event",
        "_headers",
        "body",
        "completed_at",
        "completed_monotonic",
        "disconnected_at",
        "disconnected_monotonic",
        "ended_at",
        "ended_monotonic",
        "error",
        "events_sent",
        "method",
        "outcome",
        "path",
        "raw_body",
        "raw_headers",
        "request_id",
        "responder",
        "seq",
        "started_at",
        "started_monotonic",
        "status",
    )

    def __init__(
        self,
        seq: int,
        request_id: str,
        method: str,
        path: str,
        raw_headers: Sequence[tuple[bytes, bytes]],
        raw_body: bytes,
        started_at: float,
        started_monotonic: float,
    ) -> None:
        self.seq = seq
        self.request_id = request_id
        self.method = method
        self.path = path
        self.raw_headers = raw_headers
        self.raw_body = raw_body
        self.body: Any = None
        self.started_at = started_at
        self.started_monotonic = started_monotonic
        self.status: int | None = None
        self.responder = ""
        self.events_sent = 0
        self.completed_at: float | None = None
        self.completed_monotonic: float | None = None
        self.disconnected_at: float | None = None
        self.disconnected_monotonic: float | None = None
        self.ended_at: float | None = None
        self.ended_monotonic: float | None = None
        self.outcome: Outcome | None = None
        self.error: BaseException | None = None
        self._headers: dict[str, str] | None = None
        self._ended_event: trio.Event | None = None

    @property
    def headers(self) -> dict[str, str]:
        """Request headers as ``{lowercase name: value}`` (the last one wins)."""
        if self._headers is None:
            self._headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in self.raw_headers}
        return self._headers

    @property
    def stream(self) -> bool:
        """Whether the body asked for ``stream: true``."""
        return isinstance(self.body, dict) and self.body.get("stream") is True

    @property
    def retry_count(self) -> int:
        """The SDK's ``x-stainless-retry-count`` header (0 when absent or invalid)."""
        value = self.headers.get("x-stainless-retry-count", "0")
        return int(value) if value.isdigit() else 0

    @property
    def in_flight(self) -> bool:
        """True until the exchange has ended."""
        return self.outcome is None

    @property
    def duration(self) -> float | None:
        """Seconds from arrival to end (monotonic clock), or ``None`` while in flight."""
        if self.ended_monotonic is None:
            return None
        return self.ended_monotonic - self.started_monotonic

    async def wait_ended(self) -> Outcome:
        """Wait until the exchange ends (completion, disconnect, fault, shutdown)."""
        if self.outcome is None:
            if self._ended_event is None:
                self._ended_event = trio.Event()
            await self._ended_event.wait()
        assert self.outcome is not None
        return self.outcome

    async def wait_disconnect(self) -> float:
        """Wait until the client disconnects mid-response; return ``disconnected_monotonic``.

        Raises ``AssertionError`` if the exchange ended any other way (for example
        it completed before the client left), so a test cannot pass by accident.
        """
        outcome = await self.wait_ended()
        if outcome is not Outcome.CLIENT_CLOSED or self.disconnected_monotonic is None:
            raise AssertionError(
                f"request {self.seq} ended with {outcome.value!r}, not a disconnect"
            )
        return self.disconnected_monotonic

    def _finish(self, outcome: Outcome, now: float, now_monotonic: float) -> None:
        """Record the end of the exchange (first call wins) and wake waiters."""
        if self.outcome is not None:
            return
        self.outcome = outcome
        self.ended_at = now
        self.ended_monotonic = now_monotonic
        if self._ended_event is not None:
            self._ended_event.set()

    def __repr__(self) -> str:
        state = self.outcome.value if self.outcome else "in flight"
        return f"<RequestRecord #{self.seq} {self.method} {self.path} {self.status} {state}>"
