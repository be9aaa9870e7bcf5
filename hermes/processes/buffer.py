"""``OutputBuffer``: a process's recent output, with absolute offsets for paging.

The buffer keeps the last ``capacity`` characters (200,000 by default). Every
character ever written has an absolute offset: ``end`` is how many were
written, ``start`` the offset of the oldest one still kept. A log page asks for
``(offset, limit)`` and gets ``next_offset`` to continue from, and is told how
many characters it asked for were already dropped. Text is held in chunks, so
writing costs what is written, never the whole buffer.
"""

from __future__ import annotations

from collections import deque

import attrs

COALESCE = 4096
"""Small writes are appended to the last chunk while it stays under this size."""


@attrs.frozen(slots=True)
class Page:
    """One page of output: ``text`` spans ``[offset, next_offset)``."""

    text: str
    offset: int
    next_offset: int
    start: int
    """Oldest offset still kept."""
    end: int
    """Characters written so far (the offset the next one will get)."""
    skipped: int = 0
    """Characters between the requested offset and ``offset``: dropped from the buffer."""

    @property
    def more(self) -> bool:
        """True when there is output after this page."""
        return self.next_offset < self.end


class OutputBuffer:
    """The last ``capacity`` characters of a stream, addressed by absolute offset."""

    __slots__ = ("_chunks", "_size", "capacity", "end")

    def __init__(self, capacity: int = 200_000) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity!r}")
        self.capacity = capacity
        self.end = 0
        self._chunks: deque[str] = deque()
        self._size = 0

    @property
    def start(self) -> int:
        return self.end - self._size

    @property
    def dropped(self) -> int:
        """Characters written and no longer kept."""
        return self.start

    def __len__(self) -> int:
        return self._size

    def write(self, text: str) -> None:
        n = len(text)
        if not n:
            return
        self.end += n
        if n >= self.capacity:
            self._chunks.clear()
            self._chunks.append(text[-self.capacity :])
            self._size = self.capacity
            return
        chunks = self._chunks
        if chunks and len(chunks[-1]) + n <= COALESCE:
            chunks[-1] += text
        else:
            chunks.append(text)
        self._size += n
        excess = self._size - self.capacity
        while excess > 0:
            first = chunks[0]
            if len(first) <= excess:
                chunks.popleft()
                self._size -= len(first)
                excess -= len(first)
            else:
                chunks[0] = first[excess:]
                self._size -= excess
                excess = 0

    def _slice(self, a: int, b: int) -> str:
        """Kept text between buffer-relative positions ``a`` and ``b``."""
        if a >= b:
            return ""
        parts: list[str] = []
        pos = 0
        for chunk in self._chunks:
            size = len(chunk)
            if pos + size > a:
                parts.append(chunk[max(a - pos, 0) : b - pos])
            pos += size
            if pos >= b:
                break
        return "".join(parts)

    def read(self, offset: int | None, limit: int) -> Page:
        """Up to ``limit`` characters from ``offset``; the last ``limit`` if ``offset`` is None."""
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit!r}")
        start, end = self.start, self.end
        if offset is None:
            offset = max(start, end - limit)
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset!r}")
        skipped = max(0, start - offset)
        first = min(max(offset, start), end)
        stop = min(end, first + limit)
        return Page(self._slice(first - start, stop - start), first, stop, start, end, skipped)

    def tail(self, n: int) -> str:
        """The last ``n`` characters kept."""
        return self._slice(max(0, self._size - n), self._size) if n > 0 else ""

    def text(self) -> str:
        """Everything kept."""
        return "".join(self._chunks)
