"""One WebSocket client of the gateway: requests in, answers and events out.

``ConnectionActor`` (``server.py``) hands it the WebSocket once the token is
checked. Its reader admits requests (``requests_in_flight``, and control requests
by a semaphore of their own), one task per request except ``INLINE`` ones; its
writer drains the ``OutQueue`` (control answers in the urgent lane), the frames
queued at the time in one write (``ws_batch.py``), within ``write_timeout`` a
write; its event pumps follow the subscriptions.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

import trio
import trio_websocket

from hermes.daemon.errors import RequestError, ShuttingDown
from hermes.daemon.manager import Entry
from hermes.session import SessionEvent
from hermes.session.events import EventsLost

from . import protocol
from .coalesce import next_events
from .methods import error_code
from .outqueue import OutQueue, size_of
from .replay import from_store, ring_frame
from .ws_batch import BATCH_BYTES, send_frames

if TYPE_CHECKING:
    from .server import Shared

log = logging.getLogger("hermes.gateway")

OUT_QUEUE = 256
"""Frames queued per WebSocket client at most (and ``gateway.client_buffer_bytes``)."""
CONTROL = frozenset(
    {
        "cancel",
        "interrupt",
        "steer",
        "redirect",
        "daemon.status",
        "approval.respond",
        "subagent.stop",
        "subagent.steer",
        "subagents.pause",
        "subagents.resume",
        "actor.cancel",
    }
)
"""Control requests: their answers take the out queue's urgent lane, ahead of queued
events, and they are admitted by a semaphore of their own (``CONTROL_IN_FLIGHT``), so
they wait neither behind event traffic nor behind the connection's bulk requests."""
CONTROL_IN_FLIGHT = 8
INLINE = frozenset({"daemon.status"})
"""Requests the reader serves itself rather than in a task of their own: they never
wait for anything (``daemon.status`` reads ``SessionsView``), and a task's start is one
more scheduler pass, milliseconds each on a loaded daemon."""
SHUTTING_DOWN = "the daemon is shutting down: it takes no new connections or requests"


class WsClient:
    """Requests in, responses and events out, over one WebSocket."""

    def __init__(
        self, ws: trio_websocket.WebSocketConnection, shared: Shared, binary: bool, path: str
    ) -> None:
        self.ws = ws
        self.shared = shared
        self.binary = binary
        self.path = path
        gateway = shared.settings.config.values["gateway"]
        self.max_frame: int = gateway["max_frame_bytes"]
        self.client_queue: int = gateway["client_queue"]
        self.max_subscriptions: int = gateway["max_subscriptions"]
        self.write_timeout: float = gateway["write_timeout"]
        self.in_flight = trio.Semaphore(gateway["requests_in_flight"])
        """Held by a request from when it is read until its answer is queued: at the
        bound the reader stops reading, and the client's socket fills."""
        self.control_in_flight = trio.Semaphore(CONTROL_IN_FLIGHT)
        """The same for control requests (``CONTROL``), apart from the others."""
        self.out = OutQueue(gateway["client_buffer_bytes"], OUT_QUEUE)
        self.subscriptions: dict[str, trio.CancelScope] = {}
        self.work = trio.CancelScope()
        """The reader, the requests and the event pumps (not the writer)."""
        self.closing: tuple[int, str] | None = None
        self.sending = False
        self.send_scope: trio.CancelScope | None = None
        """Bounds the frame being written: ``write_timeout`` without a byte taken."""
        self.done = trio.Event()

    def begin_close(self, code: int, reason: str, kind: str) -> None:
        """Stop reading and serving, send what is queued, a ``kind`` notice, then a close frame."""
        if self.closing is not None:
            return
        self.closing = (code, reason)
        self.work.cancel()
        self.out.put_nowait(self._encode(protocol.notice(kind, None, {"reason": reason})))
        self.out.close()

    async def run(self) -> None:
        ended = False
        try:
            async with trio.open_nursery() as outer:
                self.outer = outer
                outer.start_soon(self._writer)
                with self.work:
                    async with trio.open_nursery() as nursery:
                        self.nursery = nursery
                        await self._reader()
                        nursery.cancel_scope.cancel()
                if self.closing is None:
                    outer.cancel_scope.cancel()  # the client left: nothing more to write
            ended = True
        finally:
            if not ended and self.closing is None and not self.sending:
                # Killed without the gateway's notice: a close frame still, if it fits.
                deadline = trio.current_time() + 0.3
                with (
                    trio.CancelScope(shield=True, deadline=deadline),
                    contextlib.suppress(Exception),
                ):
                    await self.ws.aclose(*self.shared.close)

    async def _writer(self) -> None:
        try:
            await self._write()
        except trio_websocket.ConnectionClosed:
            pass  # the client left
        finally:
            self.outer.cancel_scope.cancel()

    async def _write(self) -> None:
        out = self.out
        while True:
            try:
                data = await out.get()
            except trio.EndOfChannel:
                break
            # Frames already queued go out in the same write, without another wait on the
            # queue: each wait and each write is a scheduler pass, a few ms on a loaded daemon.
            batch, size = [data], size_of(data)
            while size < BATCH_BYTES:
                try:
                    data = out.get_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
                batch.append(data)
                size += size_of(data)
            self.sending = True
            with trio.CancelScope(deadline=trio.current_time() + self.write_timeout) as scope:
                self.send_scope = scope
                await send_frames(self.ws, batch)
            self.send_scope = None
            self.sending = False
            if scope.cancelled_caught:
                log.warning(
                    "%s: client took no byte in %g s; disconnecting",
                    self.path,
                    self.write_timeout,
                )
                self.sending = True  # the connection is in an unknown state: no more frames
                with trio.move_on_after(1.0):
                    await self.ws.aclose(1008, "too slow")
                return
        if self.closing is not None:
            with trio.move_on_after(1.0):
                await self.ws.aclose(*self.closing)

    def wrote_some(self) -> None:
        """Part of a frame went out: the client reads, so its deadline moves on."""
        if self.send_scope is not None:
            self.send_scope.deadline = trio.current_time() + self.write_timeout

    def _encode(self, frame: dict[str, Any]) -> str | bytes:
        try:
            return protocol.encode(frame, self.binary)
        except (TypeError, ValueError, OverflowError) as exc:
            return protocol.encode(
                protocol.error_frame(frame.get("id"), "internal", f"cannot encode: {exc}"),
                self.binary,
            )

    async def _send(self, frame: dict[str, Any], urgent: bool = False) -> None:
        """Queue ``frame`` (ahead of events if ``urgent``), waiting for room; dropped if
        the connection is closing."""
        with contextlib.suppress(trio.ClosedResourceError):
            await self.out.put(self._encode(frame), urgent=urgent)

    async def _reader(self) -> None:
        while True:
            try:
                data = await self.ws.get_message()
            except trio_websocket.ConnectionClosed:
                return
            if len(data) > self.max_frame:
                await self._send(
                    protocol.error_frame(
                        None,
                        "frame_too_large",
                        f"frame of {len(data)} bytes is over the limit of {self.max_frame}",
                    )
                )
                continue
            try:
                request_id, method, params = protocol.decode(data, self.binary)
            except protocol.ProtocolError as exc:
                await self._send(protocol.error_frame(exc.request_id, exc.code, str(exc)))
                continue
            slots = self.control_in_flight if method in CONTROL else self.in_flight
            await slots.acquire()
            if method in INLINE:  # answered in this pass, not in a task's next one
                await self._handle(request_id, method, params, slots)
            else:
                self.nursery.start_soon(self._handle, request_id, method, params, slots)

    async def _handle(
        self, request_id: Any, method: str, params: dict[str, Any], slots: trio.Semaphore
    ) -> None:
        try:
            try:
                if self.shared.stopping and method != "events.unsubscribe":
                    raise ShuttingDown(SHUTTING_DOWN)
                if method == "events.subscribe":
                    await self._subscribe(request_id, params)
                    return
                if method == "events.unsubscribe":
                    session = params.get("session")
                    scope = (
                        self.subscriptions.pop(session, None) if isinstance(session, str) else None
                    )
                    if scope is not None:
                        scope.cancel()
                    frame = protocol.result_frame(request_id, {"unsubscribed": bool(scope)})
                else:
                    result = await self.shared.methods.call(method, params)
                    frame = protocol.result_frame(request_id, result)
            except Exception as exc:
                frame = _error(request_id, method, exc)
            await self._send(frame, urgent=slots is self.control_in_flight)
        finally:
            slots.release()  # only once the answer is queued

    async def _subscribe(self, request_id: Any, params: dict[str, Any]) -> None:
        from .params import Params

        p = Params("events.subscribe", params)
        session = p.text("session")
        since = p.opt_int("since", None)
        epoch = p.opt_str("epoch")
        approvals = p.opt_bool("approvals", False)
        p.done()
        if session not in self.subscriptions and len(self.subscriptions) >= self.max_subscriptions:
            raise RequestError(
                f"events.subscribe: this connection already has {len(self.subscriptions)} "
                f"subscriptions (gateway.max_subscriptions); unsubscribe from one first",
                "too_many_subscriptions",
            )
        entry = await self.shared.methods.s.manager.lookup(session)
        old = self.subscriptions.pop(session, None)
        if old is not None:
            old.cancel()
        epoch_changed = epoch is not None and epoch != self.shared.settings.boot_id
        if epoch_changed and since is not None:
            # seqs after what the database held at this boot were reused: replay those
            since = min(since, entry.hub.base)
        await self.nursery.start(self._pump, request_id, entry, since, approvals, epoch_changed)

    async def _pump(
        self,
        request_id: Any,
        entry: Entry,
        since: int | None,
        approvals: bool,
        epoch_changed: bool,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        with trio.CancelScope() as scope:
            self.subscriptions[entry.session_id] = scope
            with entry.hub.subscribe_since(since, self.client_queue, approvals=approvals) as (
                replay,
                sub,
            ):
                task_status.started()
                seq = entry.hub.seq
                stored, missed = await from_store(self.shared.methods.s.store, entry, since, replay)
                result = {
                    "session": entry.session_id,
                    "path": entry.path,
                    "seq": seq,
                    "epoch": self.shared.settings.boot_id,
                    "replayed": len(stored) + len(replay.events),
                    "stored": len(stored),
                    "missed": missed,
                    "epoch_changed": epoch_changed,
                }
                await self._send(protocol.result_frame(request_id, result))
                if missed:
                    await self._send(
                        protocol.notice(
                            "events.dropped",
                            entry.session_id,
                            {"count": missed, "why": "no longer held for replay"},
                        )
                    )
                for frame in stored:
                    await self._send(frame)
                for item in replay.events:
                    await self._send(ring_frame(item, entry))
                told = 0  # events this client was told it lost
                while True:
                    try:
                        events = await next_events(sub.receive)
                    except trio.EndOfChannel:
                        break
                    for out in events:
                        if isinstance(out.payload, EventsLost):
                            told = await self._tell_lost(sub.lost - told, out, entry) + told
                        else:
                            await self._send(protocol.event_frame(out, entry.path))
                    if sub.lost > told and not sub.receive.statistics().current_buffer_used:
                        # Caught up after a loss: say so now, not at the next event (the
                        # loss may have taken the burst's last events, turn.completed too).
                        now = SessionEvent(entry.session_id, entry.hub.seq, EventsLost(0))
                        told = await self._tell_lost(sub.lost - told, now, entry) + told
        if self.subscriptions.get(entry.session_id) is scope:
            del self.subscriptions[entry.session_id]

    async def _tell_lost(self, count: int, at: SessionEvent, entry: Entry) -> int:
        """An ``events.dropped`` frame for ``count`` lost events (none if 0); returns ``count``."""
        if count > 0:
            notice = SessionEvent(at.session, at.seq, EventsLost(count))
            await self._send(protocol.event_frame(notice, entry.path))
        return max(count, 0)


def _error(request_id: Any, method: str, exc: Exception) -> dict[str, Any]:
    code = error_code(exc)
    if code == "internal":
        log.error("%s failed", method, exc_info=exc)
        message = f"internal error in {method}: {type(exc).__name__}: {exc}"
    else:
        message = str(exc) or type(exc).__name__
    return protocol.error_frame(request_id, code, message)
