"""A WebSocket client's outgoing frames, bounded in bytes and in frames.

Producers (request handlers, event pumps, the reader's error answers) wait
when the queue holds ``max_bytes`` or ``max_frames``; the writer takes frames
out as the client accepts them. A frame larger than ``max_bytes`` still goes
through, alone, once the queue is empty, so nothing waits forever. Overflow
policy: producers wait (the reader stops reading requests while its handlers
wait), and a client that stops reading is dropped by the writer's deadline.
"""

from __future__ import annotations

from collections import deque

import trio

Frame = str | bytes


def size_of(frame: Frame) -> int:
    """Bytes on the wire (a text frame is sent as UTF-8)."""
    if isinstance(frame, bytes) or frame.isascii():
        return len(frame)
    return len(frame.encode("utf-8", "surrogatepass"))


class OutQueue:
    """Frames for one client; ``put`` waits for room, ``get`` waits for a frame."""

    __slots__ = (
        "_frames",
        "_has_frames",
        "_has_room",
        "bytes",
        "closed",
        "max_bytes",
        "max_frames",
        "peak_bytes",
    )

    def __init__(self, max_bytes: int, max_frames: int) -> None:
        self.max_bytes = max_bytes
        self.max_frames = max_frames
        self.bytes = 0
        """Bytes queued now."""
        self.peak_bytes = 0
        """The most bytes queued at once."""
        self.closed = False
        self._frames: deque[Frame] = deque()
        self._has_room = trio.lowlevel.ParkingLot()
        self._has_frames = trio.lowlevel.ParkingLot()

    def __len__(self) -> int:
        return len(self._frames)

    def _full(self, size: int) -> bool:
        frames = self._frames
        return bool(frames) and (
            self.bytes + size > self.max_bytes or len(frames) >= self.max_frames
        )

    async def put(self, frame: Frame) -> None:
        """Queue ``frame``, waiting while the queue is full; ``ClosedResourceError``
        once the queue is closed."""
        size = size_of(frame)
        if self.closed:
            await trio.lowlevel.checkpoint()
            raise trio.ClosedResourceError("the client's connection is closing")
        if not self._full(size):
            await trio.lowlevel.checkpoint_if_cancelled()
        while self._full(size):
            await self._has_room.park()
            if self.closed:
                raise trio.ClosedResourceError("the client's connection is closing")
        self.put_nowait(frame)

    def put_nowait(self, frame: Frame) -> None:
        """Queue ``frame`` past the bounds (the last frames of a closing connection)."""
        self._frames.append(frame)
        self.bytes += size_of(frame)
        if self.bytes > self.peak_bytes:
            self.peak_bytes = self.bytes
        self._has_frames.unpark()

    def get_nowait(self) -> Frame:
        """The oldest frame (``WouldBlock`` if none; ``EndOfChannel`` once closed and empty)."""
        if not self._frames:
            raise trio.EndOfChannel if self.closed else trio.WouldBlock
        frame = self._frames.popleft()
        self.bytes -= size_of(frame)
        if self._has_room:
            self._has_room.unpark_all()
        return frame

    async def get(self) -> Frame:
        """The oldest frame, waiting for one (``EndOfChannel`` once closed and empty)."""
        while not self._frames and not self.closed:
            await self._has_frames.park()
        await trio.lowlevel.checkpoint_if_cancelled()
        return self.get_nowait()

    def close(self) -> None:
        """Refuse further ``put``s (those waiting raise); queued frames stay for ``get``."""
        self.closed = True
        self._has_room.unpark_all()
        self._has_frames.unpark_all()
