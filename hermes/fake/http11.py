"""A minimal, strict HTTP/1.1 codec for the fake provider: request heads in, response bytes out.

Why not h11: on the 2-core reference box h11 cost about 70 us per request
(header validation regexes, state machine), a quarter of the fake's whole
per-request budget. This module does only what the fake needs: request line
and header parsing with lowercased names, ``content-length`` and chunked
request bodies, ``Expect: 100-continue``, keep-alive rules for HTTP/1.1 and
1.0, and response heads with ``content-length`` or chunked framing. Anything
malformed is a ``ProtocolError`` carrying the status to answer with.
"""

from __future__ import annotations

from collections.abc import Iterable

from .wire import reason

#: Largest request head (request line plus headers) accepted.
MAX_HEAD_BYTES = 64 * 1024

#: The zero-length chunk that ends a chunked body (no trailers).
LAST_CHUNK = b"0\r\n\r\n"

#: The interim response sent to a client waiting on ``Expect: 100-continue``.
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class ProtocolError(Exception):
    """The client broke HTTP/1.1; answer ``status`` (if possible) and close."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class RequestHead:
    """A parsed request line and headers."""

    __slots__ = (
        "chunked",
        "content_length",
        "expect_continue",
        "headers",
        "http10",
        "keep_alive",
        "method",
        "target",
    )

    def __init__(
        self,
        method: str,
        target: str,
        headers: list[tuple[bytes, bytes]],
        *,
        http10: bool,
        content_length: int,
        chunked: bool,
        keep_alive: bool,
        expect_continue: bool,
    ) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.http10 = http10
        self.content_length = content_length
        self.chunked = chunked
        self.keep_alive = keep_alive
        self.expect_continue = expect_continue

    @property
    def path(self) -> str:
        """The target without its query string."""
        q = self.target.find("?")
        return self.target if q < 0 else self.target[:q]


def parse_head(data: bytes) -> RequestHead:
    """Parse a request head (without the blank line that ends it)."""
    lines = data.split(b"\r\n")
    while lines and not lines[0]:
        lines.pop(0)  # RFC 9112 2.2: ignore empty lines before the request line
    if not lines:
        raise ProtocolError("empty request")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise ProtocolError("malformed request line")
    method, target, version = parts
    if version == b"HTTP/1.1":
        http10 = False
    elif version == b"HTTP/1.0":
        http10 = True
    else:
        raise ProtocolError(f"unsupported HTTP version {version!r}", 505)
    headers: list[tuple[bytes, bytes]] = []
    content_length = -1
    chunked = False
    connection = b""
    expect = False
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name[-1] in b" \t" or name[0] in b" \t":
            raise ProtocolError(f"malformed header line {line[:40]!r}")
        name = name.lower()
        value = value.strip(b" \t")
        headers.append((name, value))
        if name == b"content-length":
            if not value.isdigit() or (content_length >= 0 and int(value) != content_length):
                raise ProtocolError("bad content-length")
            content_length = int(value)
        elif name == b"transfer-encoding":
            if value.lower() != b"chunked":
                raise ProtocolError(f"unsupported transfer-encoding {value!r}", 501)
            chunked = True
        elif name == b"connection":
            connection = value.lower()
        elif name == b"expect" and value.lower() == b"100-continue":
            expect = True
    if chunked and content_length >= 0:
        raise ProtocolError("both content-length and transfer-encoding")
    keep_alive = b"keep-alive" in connection if http10 else b"close" not in connection
    return RequestHead(
        method.decode("ascii", "replace"),
        target.decode("latin-1"),
        headers,
        http10=http10,
        content_length=max(content_length, 0),
        chunked=chunked,
        keep_alive=keep_alive,
        expect_continue=expect and not http10,
    )


def parse_chunk_size(line: bytes) -> int:
    """The size in a chunk-size line (extensions ignored)."""
    size = line.split(b";", 1)[0].strip()
    try:
        return int(size, 16)
    except ValueError:
        raise ProtocolError("bad chunk size") from None


def _check(value: bytes) -> bytes:
    if b"\r" in value or b"\n" in value:
        raise ValueError(f"header contains a line break: {value!r}")
    return value


def response_head(
    status: int,
    headers: Iterable[tuple[bytes, bytes]],
    *,
    length: int | None,
    close: bool = False,
    chunked: bool = True,
) -> bytes:
    """A response head. ``length=None`` means a streamed body: chunked if ``chunked``.

    Header values from scripts are checked for line breaks (no header injection).
    """
    out = [b"HTTP/1.1 %d %s\r\n" % (status, reason(status))]
    for name, value in headers:
        out.append(_check(name) + b": " + _check(value) + b"\r\n")
    if length is not None:
        out.append(b"content-length: %d\r\n" % length)
    elif chunked:
        out.append(b"transfer-encoding: chunked\r\n")
    if close:
        out.append(b"connection: close\r\n")
    out.append(b"\r\n")
    return b"".join(out)


def chunk(data: bytes) -> bytes:
    """``data`` framed as one chunk (empty data gives empty bytes, not the last chunk)."""
    if not data:
        return b""
    return b"%x\r\n%s\r\n" % (len(data), data)
