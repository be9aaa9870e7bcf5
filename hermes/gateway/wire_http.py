"""Just enough HTTP/1.1 for the gateway: read one request head, write one response.

Every connection starts here: the head tells a WebSocket upgrade from a plain
HTTP request, and carries the token. Limits: the head is at most
``MAX_HEAD`` bytes and must arrive within ``HEAD_TIMEOUT`` seconds.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import attrs
import trio

from .frames import json_text

MAX_HEAD = 16 * 1024
HEAD_TIMEOUT = 10.0

STATUS_TEXT = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    411: "Length Required",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class BadRequest(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@attrs.frozen(slots=True)
class RequestHead:
    method: str
    target: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def query_one(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else None

    @property
    def token(self) -> str | None:
        auth = self.header("authorization")
        if auth is not None and auth[:7].lower() == "bearer ":
            return auth[7:].strip()
        return self.query_one("token")

    @property
    def is_websocket(self) -> bool:
        return (self.header("upgrade") or "").lower() == "websocket"


async def read_head(stream: trio.abc.ReceiveStream) -> tuple[bytes, bytes] | None:
    """``(head, rest)``: the bytes up to the blank line and whatever came after it.

    None if the peer closed first; ``BadRequest`` (431) if the head, counted up
    to and with its blank line, is over ``MAX_HEAD`` bytes.
    """
    buffer = bytearray()
    searched = 0
    while True:
        end = buffer.find(b"\r\n\r\n", max(0, searched - 3))
        if end >= 0:
            if end + 4 > MAX_HEAD:
                raise _head_too_large()
            return bytes(buffer[: end + 4]), bytes(buffer[end + 4 :])
        if len(buffer) >= MAX_HEAD:
            raise _head_too_large()
        searched = len(buffer)
        chunk = await stream.receive_some(4096)
        if not chunk:
            return None
        buffer += chunk


def _head_too_large() -> BadRequest:
    return BadRequest(
        431, "head_too_large", f"request head (line and headers) over {MAX_HEAD} bytes"
    )


_SINGLE = frozenset({"host", "origin", "authorization", "content-length"})
"""Headers a request may carry once: a second one could say something else."""


def parse_head(head: bytes) -> RequestHead:
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes anything
        raise BadRequest(400, "bad_request", "undecodable request head") from None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "bad_request", "malformed request line")
    method, target, _ = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise BadRequest(400, "bad_request", f"malformed header line {line[:60]!r}")
        key = name.lower()
        if key in _SINGLE and key in headers:
            raise BadRequest(400, "bad_request", f"more than one {name} header")
        headers[key] = value.strip()
    url = urlsplit(target)
    return RequestHead(method, target, unquote(url.path), parse_qs(url.query), headers, head)


def response_bytes(
    status: int,
    body: bytes,
    content_type: str = "application/json",
    extra: tuple[tuple[str, str], ...] = (),
) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {STATUS_TEXT.get(status, 'Status')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(body)}",
        "Connection: close",
        "Cache-Control: no-store",
        *(f"{k}: {v}" for k, v in extra),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def json_body(value: Any) -> bytes:
    """``value`` as a JSON body, valid UTF-8 whatever it holds (see ``frames.encode``)."""
    return json_text(value).encode()


def error_response(status: int, code: str, message: str) -> bytes:
    return response_bytes(status, json_body({"error": {"code": code, "message": message}}))


class PrefixedStream(trio.abc.Stream):
    """A stream whose first bytes were already read: ``prefix`` is served first."""

    def __init__(self, stream: trio.abc.Stream, prefix: bytes) -> None:
        self.stream = stream
        self.prefix = prefix

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self.prefix:
            size = len(self.prefix) if max_bytes is None else max_bytes
            data, self.prefix = self.prefix[:size], self.prefix[size:]
            await trio.lowlevel.checkpoint()
            return bytes(data)
        return bytes(await self.stream.receive_some(max_bytes))

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        if isinstance(self.stream, trio.abc.HalfCloseableStream):
            await self.stream.send_eof()

    async def aclose(self) -> None:
        await self.stream.aclose()
