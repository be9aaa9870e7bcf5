"""One HTTP/1.1 server connection on trio: request reading, response writing, faults.

The connection's task reads requests and writes responses. A response that
will wait (a delay, a slow or endless stream, a stall, a hang) first calls
``watch()``, which starts a *reader* task that owns the receive side from then
on: it buffers what arrives and notices the client leaving at once, records
the disconnect on the current ``RequestRecord`` and cancels the connection
(a response in progress included). Responses written without waiting never
need it, which keeps the common case to one task and one wake-up per request.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from typing import TYPE_CHECKING, NoReturn

import trio

from . import http11, wire
from .http11 import ProtocolError, RequestHead
from .records import Outcome, RequestRecord

if TYPE_CHECKING:
    from .provider import FakeProvider

Headers = list[tuple[bytes, bytes]]

_RECEIVE_SIZE = 65536
_LINGER_RESET = struct.pack("ii", 1, 0)


class ClientGone(Exception):
    """Raised inside a handler when a write finds the connection closed."""


_SEND_FAILURES = (trio.BrokenResourceError, trio.ClosedResourceError, ClientGone)


class Connection:
    """Serves the requests of one accepted socket until either side closes it."""

    __slots__ = (
        "_nursery",
        "_wakeup",
        "buf",
        "chunked",
        "closing",
        "current",
        "eof",
        "keep_alive",
        "provider",
        "stream",
        "watching",
    )

    def __init__(self, stream: trio.SocketStream, provider: FakeProvider) -> None:
        self.stream = stream
        self.provider = provider
        self.buf = b""
        self.eof = False
        self.closing = False
        self.keep_alive = True
        self.chunked = True
        self.current: RequestRecord | None = None
        self.watching = False
        self._wakeup: trio.Event | None = None
        self._nursery: trio.Nursery | None = None

    # ------------------------------------------------------------------ tasks

    async def run(self) -> None:
        """Serve until the client leaves, a fault closes the socket, or we are cancelled."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                try:
                    await self._serve()
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            self.closing = True
            await trio.aclose_forcefully(self.stream)

    def watch(self) -> None:
        """Watch the socket from now on, so the client leaving is seen while we wait."""
        if not self.watching and self._nursery is not None:
            self.watching = True
            self._nursery.start_soon(self._reader)

    async def pause(self, seconds: float) -> None:
        """Sleep ``seconds`` while watching for the client leaving."""
        self.watch()
        await trio.sleep(seconds)

    async def wait_forever(self) -> NoReturn:
        """Wait until the client leaves (or the provider shuts down)."""
        self.watch()
        await trio.sleep_forever()

    async def _reader(self) -> None:
        while not self.eof:
            try:
                data = await self.stream.receive_some(_RECEIVE_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if self.closing:
                return
            if data:
                self.buf += data
            else:
                self.eof = True
                self._client_left()
            if self._wakeup is not None:
                self._wakeup.set()
                self._wakeup = None

    def _client_left(self) -> None:
        """The client closed (or reset) the connection: end the current exchange now.

        The connection is useless from here on, so a response in progress is
        stopped by cancelling the whole connection (no per-request scope needed).
        """
        record = self.current
        if record is None:
            return
        if record.outcome is None:
            record.disconnected_at = trio.current_time()
            record.disconnected_monotonic = time.monotonic()
            self.provider.finish(record, Outcome.CLIENT_CLOSED)
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    async def _fill(self) -> bool:
        """Wait for more bytes in ``buf``; False at end of input."""
        if self.eof:
            return False
        if self.watching:
            self._wakeup = trio.Event()
            await self._wakeup.wait()
            return True
        try:
            data = await self.stream.receive_some(_RECEIVE_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            data = b""
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    async def _read_head(self) -> RequestHead | None:
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self.buf) > http11.MAX_HEAD_BYTES:
                raise ProtocolError("request head too large", 431)
            if not await self._fill():
                if self.buf.strip():
                    raise ProtocolError("incomplete request")
                return None
        head = http11.parse_head(self.buf[:end])
        self.buf = self.buf[end + 4 :]
        return head

    async def _read_exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not await self._fill():
                raise ProtocolError("incomplete request body")
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    async def _read_line(self) -> bytes:
        while (end := self.buf.find(b"\r\n")) < 0:
            if len(self.buf) > http11.MAX_HEAD_BYTES or not await self._fill():
                raise ProtocolError("bad chunked body")
        line, self.buf = self.buf[:end], self.buf[end + 2 :]
        return line

    async def _read_chunked(self, limit: int) -> bytes | None:
        """A chunked body, or ``None`` if it grows past ``limit``."""
        parts: list[bytes] = []
        size = 0
        while True:
            n = http11.parse_chunk_size(await self._read_line())
            if n == 0:
                while await self._read_line():  # trailers, up to the blank line
                    pass
                return b"".join(parts)
            size += n
            if size > limit:
                return None
            parts.append(await self._read_exactly(n))
            if await self._read_line():
                raise ProtocolError("bad chunk terminator")

    async def _serve(self) -> None:
        provider = self.provider
        while True:
            try:
                head = await self._read_head()
                if head is None:
                    return
                started_at = trio.current_time()
                started_mono = time.monotonic()
                self.keep_alive = head.keep_alive
                self.chunked = not head.http10
                limit = provider.max_body_bytes
                body: bytes | None = b""
                if head.chunked or head.content_length:
                    if head.content_length > limit:
                        body = None
                    else:
                        if head.expect_continue:
                            await self.stream.send_all(http11.CONTINUE)
                        if head.chunked:
                            body = await self._read_chunked(limit)
                        else:
                            body = await self._read_exactly(head.content_length)
            except ProtocolError as exc:
                await self._protocol_error(exc)
                return
            except _SEND_FAILURES:
                return
            if body is None:
                self.keep_alive = False  # the body was not read
            record = provider.new_record(head, body or b"", started_at, started_mono)
            await self._respond(record, head, body is None)
            if self.eof or self.closing or not self.keep_alive:
                return

    async def _respond(self, record: RequestRecord, head: RequestHead, too_large: bool) -> None:
        provider = self.provider
        self.current = record
        try:
            if self.eof:
                self._client_left()
            try:
                if too_large:
                    record.responder = "too large"
                    await self.send_error(record, 413)
                else:
                    await provider.handle(self, record, head)
            except _SEND_FAILURES:
                if not self.closing:
                    self.eof = True
                    self._client_left()
            except Exception as exc:
                await self._internal_error(record, exc)
            if record.outcome is None:
                provider.finish(record, Outcome.COMPLETED)
        finally:
            self.current = None
            if record.outcome is None:
                provider.finish(record, Outcome.SERVER_SHUTDOWN)

    # ------------------------------------------------------------ responses

    async def _write(self, data: bytes) -> None:
        if self.closing:
            raise ClientGone
        await self.stream.send_all(data)

    def _completed(self, record: RequestRecord) -> None:
        record.completed_at = trio.current_time()
        record.completed_monotonic = time.monotonic()

    async def send_full(
        self,
        record: RequestRecord,
        status: int,
        headers: Headers,
        body: bytes,
        outcome: Outcome | None = Outcome.COMPLETED,
    ) -> None:
        """Headers and a whole ``content-length`` body in one write; end with ``outcome``."""
        record.status = status
        head = http11.response_head(status, headers, length=len(body), close=not self.keep_alive)
        await self._write(head + body)
        self._completed(record)
        if outcome is not None:
            self.provider.finish(record, outcome)

    async def send_error(
        self,
        record: RequestRecord,
        status: int,
        message: str | None = None,
        *,
        error_type: str | None = None,
        error_code: str | None = None,
        extra: Headers | None = None,
        outcome: Outcome | None = Outcome.COMPLETED,
    ) -> None:
        """An API error response with the JSON error body."""
        headers = [
            (b"content-type", b"application/json"),
            (b"request-id", record.request_id.encode()),
        ]
        if extra:
            headers.extend(extra)
        body = wire.error_body(
            status,
            record.request_id,
            message=message,
            error_type=error_type,
            error_code=error_code,
        )
        await self.send_full(record, status, headers, body, outcome)

    async def send_partial(
        self, record: RequestRecord, status: int, headers: Headers, body: bytes
    ) -> None:
        """Headers announcing all of ``body`` but only its first half (a fault's prelude)."""
        record.status = status
        head = http11.response_head(status, headers, length=len(body))
        await self._write(head + body[: len(body) // 2])

    async def start_stream(
        self, record: RequestRecord, headers: Headers, first: bytes, *, end: bool = False
    ) -> None:
        """200 headers for a streamed body plus ``first`` (and the end, if ``end``), one write."""
        record.status = 200
        data = http11.response_head(
            200, headers, length=None, close=not self.keep_alive, chunked=self.chunked
        )
        data += self._frame(first)
        if end and self.chunked:
            data += http11.LAST_CHUNK
        await self._write(data)
        if end:
            self._completed(record)
            if not self.chunked:
                self.keep_alive = False

    def _frame(self, data: bytes) -> bytes:
        return http11.chunk(data) if self.chunked else data

    async def send_chunk(self, data: bytes) -> None:
        """One piece of the streamed body."""
        await self._write(self._frame(data))

    async def end_stream(self, record: RequestRecord) -> None:
        """End the streamed body (the last chunk; for HTTP/1.0, by closing afterwards)."""
        if self.chunked:
            await self._write(http11.LAST_CHUNK)
        else:
            self.keep_alive = False
        self._completed(record)

    async def reset(self, record: RequestRecord) -> None:
        """Abort the connection with a TCP RST (SO_LINGER 0, then close)."""
        self.provider.finish(record, Outcome.RESET_BY_SERVER)
        self.closing = True
        with contextlib.suppress(OSError):
            self.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
        await trio.aclose_forcefully(self.stream)

    async def close(self, record: RequestRecord, outcome: Outcome) -> None:
        """Close the connection cleanly (FIN) and end the exchange with ``outcome``."""
        self.provider.finish(record, outcome)
        self.closing = True
        await trio.aclose_forcefully(self.stream)

    # ---------------------------------------------------------------- errors

    async def _protocol_error(self, exc: ProtocolError) -> None:
        body = wire.error_body(exc.status, "req_fake_protocol", message=f"Bad HTTP request: {exc}")
        head = http11.response_head(
            exc.status, [(b"content-type", b"application/json")], length=len(body), close=True
        )
        with contextlib.suppress(*_SEND_FAILURES):
            await self._write(head + body)

    async def _internal_error(self, record: RequestRecord, exc: Exception) -> None:
        """A bug in the fake or a scripted responder: report it as a 500 and close."""
        record.error = exc
        self.provider.errors.append(exc)
        if record.status is None and not self.closing:
            self.keep_alive = False
            with contextlib.suppress(*_SEND_FAILURES):
                await self.send_error(record, 500, f"fake provider error: {exc!r}", outcome=None)
        await self.close(record, Outcome.SERVER_ERROR)
