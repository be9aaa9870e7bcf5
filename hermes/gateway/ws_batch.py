"""Several queued WebSocket frames in one write to the socket.

``trio_websocket.WebSocketConnection.send_message`` takes its stream lock and
writes one frame per call: a scheduler pass and a ``send`` system call a frame,
which under fifty streaming sessions was a tenth of the daemon's loop time.
``send_frames`` encodes the frames with the connection's own wsproto state, in
order, and writes them with one ``send_all`` under the same lock, failing the
way ``send_message`` does (``ConnectionClosed``). It reads the connection's
private fields (``_wsproto``, ``_stream``, ``_stream_lock``, ``_close_reason``,
``_abort_web_socket``), so the dependency is pinned below trio-websocket 0.13.
"""

from __future__ import annotations

from collections.abc import Sequence

import trio
import trio_websocket
from wsproto.events import BytesMessage, TextMessage

from .outqueue import Frame

BATCH_BYTES = 256 * 1024
"""The most bytes the writer gathers for one write (a larger frame goes alone)."""


async def send_frames(ws: trio_websocket.WebSocketConnection, frames: Sequence[Frame]) -> None:
    """Send ``frames`` in order as one write; ``ConnectionClosed`` if the connection is
    closed or breaks."""
    if len(frames) == 1:
        await ws.send_message(frames[0])
        return
    if ws._close_reason:
        raise trio_websocket.ConnectionClosed(ws._close_reason)
    proto = ws._wsproto
    data = b"".join(
        proto.send(TextMessage(data=f) if isinstance(f, str) else BytesMessage(data=f))
        for f in frames
    )
    async with ws._stream_lock:
        try:
            await ws._stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await ws._abort_web_socket()
            assert ws._close_reason is not None
            raise trio_websocket.ConnectionClosed(ws._close_reason) from None
