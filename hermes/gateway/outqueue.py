"""A WebSocket client's outgoing frames, bounded in bytes and in frames, in two lanes.

Producers (request handlers, event pumps, the reader's error answers) wait
when their lane holds ``max_bytes`` or ``max_frames``; the writer takes frames
out as the client accepts them. A frame larger than ``max_bytes`` still goes
through, alone, once its lane is empty, so nothing waits forever. Overflow
policy: producers wait (the reader stops reading requests while its handlers
wait), and a client that stops reading is dropped by the writer's deadline.

The **urgent lane** holds the answers to control requests (cancel, interrupt,
steer, status, approval answers: ``server.CONTROL``). The writer always takes
an urgent frame before an ordinary one, and an urgent ``put`` waits only for
room in its own lane, so a control answer never queues behind the event
traffic a busy session streams to the same client. Each lane keeps its own
order; the two together hold at most twice the bounds.
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


class _Lane:
    __slots__ = ("bytes", "frames", "has_room")

    def __init__(self) -> None:
        self.frames: deque[tuple[Frame, int]] = deque()
        self.bytes = 0
        self.has_room = trio.lowlevel.ParkingLot()


class OutQueue:
    """Frames for one client; ``put`` waits for room, ``get`` waits for a frame."""

    __slots__ = (
        "_has_frames",
        "_lanes",
        "closed",
        "max_bytes",
        "max_frames",
        "peak_bytes",
    )

    def __init__(self, max_bytes: int, max_frames: int) -> None:
        self.max_bytes = max_bytes
        self.max_frames = max_frames
        self.peak_bytes = 0
        """The most bytes queued at once."""
        self.closed = False
        self._lanes = (_Lane(), _Lane())
        """Ordinary, urgent."""
        self._has_frames = trio.lowlevel.ParkingLot()

    def __len__(self) -> int:
        return len(self._lanes[0].frames) + len(self._lanes[1].frames)

    @property
    def bytes(self) -> int:
        """Bytes queued now, both lanes."""
        return self._lanes[0].bytes + self._lanes[1].bytes

    def _full(self, lane: _Lane, size: int) -> bool:
        return bool(lane.frames) and (
            lane.bytes + size > self.max_bytes or len(lane.frames) >= self.max_frames
        )

    async def put(self, frame: Frame, *, urgent: bool = False) -> None:
        """Queue ``frame`` (in the urgent lane if ``urgent``), waiting while its lane is
        full; ``ClosedResourceError`` once the queue is closed."""
        size = size_of(frame)
        lane = self._lanes[urgent]
        if self.closed:
            await trio.lowlevel.checkpoint()
            raise trio.ClosedResourceError("the client's connection is closing")
        if not self._full(lane, size):
            await trio.lowlevel.checkpoint_if_cancelled()
        while self._full(lane, size):
            await lane.has_room.park()
            if self.closed:
                raise trio.ClosedResourceError("the client's connection is closing")
        self._append(lane, frame, size)

    def put_nowait(self, frame: Frame) -> None:
        """Queue ``frame`` past the bounds, after every ordinary frame (the last frames
        of a closing connection)."""
        self._append(self._lanes[0], frame, size_of(frame))

    def _append(self, lane: _Lane, frame: Frame, size: int) -> None:
        lane.frames.append((frame, size))
        lane.bytes += size
        total = self.bytes
        if total > self.peak_bytes:
            self.peak_bytes = total
        self._has_frames.unpark()

    def get_nowait(self) -> Frame:
        """The oldest urgent frame, else the oldest ordinary one (``WouldBlock`` if none;
        ``EndOfChannel`` once closed and empty)."""
        ordinary, urgent = self._lanes
        lane = urgent if urgent.frames else ordinary
        if not lane.frames:
            raise trio.EndOfChannel if self.closed else trio.WouldBlock
        frame, size = lane.frames.popleft()
        lane.bytes -= size
        if lane.has_room:
            lane.has_room.unpark_all()
        return frame

    async def get(self) -> Frame:
        """The next frame, waiting for one (``EndOfChannel`` once closed and empty)."""
        while not len(self) and not self.closed:
            await self._has_frames.park()
        await trio.lowlevel.checkpoint_if_cancelled()
        return self.get_nowait()

    def close(self) -> None:
        """Refuse further ``put``s (those waiting raise); queued frames stay for ``get``."""
        self.closed = True
        for lane in self._lanes:
            lane.has_room.unpark_all()
        self._has_frames.unpark_all()
