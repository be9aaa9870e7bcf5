"""The gateway: one listener, one actor per connection, WebSocket and HTTP on one port.

    gateway          GatewayActor: binds the port, writes the endpoint file, spawns connections
    |-- accept       Acceptor: the accept loop (casts each new stream to the gateway)
    `-- conn-<n>     ConnectionActor: reads the head, checks the token, then serves
                     a WebSocket (``WsClient``) or one HTTP request (``http_api``)

A connection that fails (bad frames, a peer that vanished) ends only itself;
its actor logs why. Every connection must present the token before anything
else is read or answered.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
from pathlib import Path
from typing import Any

import attrs
import trio
import trio_websocket

from actors import Actor, ActorRef, Exit, MailboxConfig, Overflow
from hermes.daemon.config import Settings
from hermes.daemon.manager import Entry, ManagerClient, Status
from hermes.daemon.security import token_matches
from hermes.daemon.session_settings import memory_store
from hermes.store import StoreClient

from . import protocol
from .coalesce import next_events
from .http_api import serve_http
from .methods import Methods, Services, error_code
from .replay import from_store, ring_frame
from .wire_http import (
    HEAD_TIMEOUT,
    BadRequest,
    PrefixedStream,
    error_response,
    parse_head,
    read_head,
)

log = logging.getLogger("hermes.gateway")

WRITE_TIMEOUT = 10.0
"""A client that takes longer than this to accept one frame is disconnected."""
OUT_QUEUE = 256


@attrs.frozen(slots=True)
class NewConnection:
    stream: trio.SocketStream


@attrs.frozen(slots=True)
class _Run:
    pass


@attrs.frozen(slots=True)
class GetAddress:
    pass


@attrs.define
class Shared:
    """What every connection of one gateway incarnation needs."""

    settings: Settings
    token: str
    methods: Methods
    connections: int = 0
    total: int = 0


class Acceptor(Actor):
    def __init__(self, gateway: ActorRef, listeners: list[trio.SocketListener]) -> None:
        self.gateway = gateway
        self.listeners = listeners

    async def receive(self, message: object) -> None:
        if isinstance(message, _Run):
            async with trio.open_nursery() as nursery:
                for listener in self.listeners:
                    nursery.start_soon(self._accept, listener)

    async def _accept(self, listener: trio.SocketListener) -> None:
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:  # EMFILE and friends: back off, keep serving
                log.warning("accept failed: %s", exc)
                await trio.sleep(0.1)
                continue
            await self.gateway.cast(NewConnection(stream))


class GatewayActor(Actor):
    trap_exits = True
    mailbox = MailboxConfig(capacity=1000, overflow=Overflow.BLOCK)
    shutdown_budget = 2.0

    def __init__(self, settings: Settings, token: str) -> None:
        self.settings = settings
        self.token = token
        self.listeners: list[trio.SocketListener] = []

    async def on_start(self) -> None:
        config = self.settings.config
        host, port = config.get("daemon", "host"), config.get("daemon", "port")
        self.listeners = await trio.open_tcp_listeners(port, host=host)
        sockname = self.listeners[0].socket.getsockname()
        self.host, self.port = str(sockname[0]), int(sockname[1])
        self.unix_path: str | None = None
        if config.get("daemon", "unix_socket"):
            path = self.settings.paths.socket_file
            self.listeners.append(await open_private_unix_listener(path))
            self.unix_path = str(path)
        parent = self.ctx.parent
        assert parent is not None
        system = self.ctx.system
        manager_ref = system.lookup(parent.path + "/sessions")
        store_ref = system.lookup(parent.path + "/store")
        if manager_ref is None or store_ref is None:
            raise RuntimeError("the gateway starts after the store and the sessions manager")
        manager = ManagerClient(manager_ref, view=self.settings.sessions_view)
        config = self.settings.config
        memory = memory_store(config, config.data_dir(self.settings.paths))
        services = Services(
            system,
            self.settings,
            manager,
            StoreClient(store_ref, lane=self.settings.store_lane),
            parent.path,
            memory,
        )
        self.shared = Shared(self.settings, self.token, Methods(services))
        self.acceptor = await self.ctx.spawn(
            Acceptor(self.ctx.self, self.listeners), name="accept", shutdown=0
        )
        await self.acceptor.cast(_Run())
        status = await manager.call(Status())
        self._write_endpoint(status)
        log.info("gateway listening on http://%s:%d (ws and http)", self.host, self.port)

    def _write_endpoint(self, status: dict[str, Any]) -> None:
        paths = self.settings.paths
        host = f"[{self.host}]" if ":" in self.host else self.host
        info = {
            "pid": os.getpid(),
            "host": self.host,
            "port": self.port,
            "url": f"http://{host}:{self.port}",
            "ws": f"ws://{host}:{self.port}/ws",
            "boot_id": self.settings.boot_id,
            "started_at": self.settings.started_at,
            "model": status["model"],
            "demo": status["demo"],
            "log": str(paths.log_file),
            "unix": self.unix_path,
        }
        tmp = paths.endpoint_file.with_name(paths.endpoint_file.name + ".tmp")
        tmp.write_text(json.dumps(info, indent=2) + "\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, paths.endpoint_file)

    async def receive(self, message: object) -> object:
        if isinstance(message, NewConnection):
            await self._connection(message.stream)
        elif isinstance(message, Exit):
            if message.actor == self.acceptor:
                raise RuntimeError(f"the accept loop exited: {message.reason.describe()}")
        elif isinstance(message, GetAddress):
            return (self.host, self.port)
        return None

    async def _connection(self, stream: trio.SocketStream) -> None:
        shared = self.shared
        limit = self.settings.config.get("gateway", "max_connections")
        if shared.connections >= limit:
            with trio.move_on_after(1.0):
                await stream.send_all(
                    error_response(503, "overloaded", f"too many connections ({limit})")
                )
            await trio.aclose_forcefully(stream)
            return
        shared.connections += 1
        shared.total += 1
        try:
            ref = await self.ctx.spawn(
                ConnectionActor(stream, shared), name=f"conn-{shared.total}", shutdown=0
            )
        except BaseException:
            shared.connections -= 1
            await trio.aclose_forcefully(stream)
            raise
        await ref.cast(_Run())

    async def on_stop(self, reason: object) -> None:
        for listener in self.listeners:
            with trio.move_on_after(0.5):
                await listener.aclose()
        if getattr(self, "unix_path", None):
            with contextlib.suppress(OSError):
                os.unlink(self.settings.paths.socket_file)


class ConnectionActor(Actor):
    """One client connection; its whole life runs in one ``receive``."""

    mailbox = MailboxConfig(capacity=4, overflow=Overflow.FAIL)

    def __init__(self, stream: trio.SocketStream, shared: Shared) -> None:
        self.stream = stream
        self.shared = shared

    async def receive(self, message: object) -> None:
        if not isinstance(message, _Run):
            return
        try:
            await self._serve()
        except* (trio.BrokenResourceError, trio.ClosedResourceError, trio_websocket.HandshakeError):
            pass  # the peer went away
        except* Exception as group:
            log.warning("connection failed", exc_info=group)
        finally:
            self.shared.connections -= 1
            await trio.aclose_forcefully(self.stream)
            self.ctx.stop()

    async def _serve(self) -> None:
        stream = self.stream
        try:
            with trio.fail_after(HEAD_TIMEOUT):
                got = await read_head(stream)
            if got is None:
                return
            head_bytes, rest = got
            head = parse_head(head_bytes)
        except trio.TooSlowError:
            await _send_quietly(stream, error_response(408, "timeout", "request head too slow"))
            return
        except BadRequest as exc:
            await _send_quietly(stream, error_response(exc.status, exc.code, str(exc)))
            return
        if not token_matches(self.shared.token, head.token):
            what = "missing" if not head.token else "wrong"
            await _send_quietly(
                stream,
                error_response(
                    401,
                    "unauthorized",
                    f"{what} token: send 'Authorization: Bearer <token>' with the token from "
                    "the daemon's runtime directory (hermes daemon status shows where)",
                ),
            )
            return
        if head.is_websocket:
            await self._websocket(PrefixedStream(stream, head_bytes + rest))
        else:
            await serve_http(stream, head, rest, self.shared.methods, self.shared.settings)

    async def _websocket(self, stream: PrefixedStream) -> None:
        gateway = self.shared.settings.config.values["gateway"]
        max_frame: int = gateway["max_frame_bytes"]
        async with trio.open_nursery() as nursery:
            request = await trio_websocket.wrap_server_stream(
                nursery, stream, message_queue_size=4, max_message_size=4 * max_frame
            )
            offered = request.proposed_subprotocols
            chosen = next((p for p in protocol.SUBPROTOCOLS if p in offered), None)
            ws = await request.accept(subprotocol=chosen)
            client = WsClient(ws, self.shared, chosen == protocol.MSGPACK, self.ctx.path)
            try:
                await client.run()
            finally:
                nursery.cancel_scope.cancel()


async def _send_quietly(stream: trio.abc.SendStream, data: bytes) -> None:
    with trio.move_on_after(2.0):
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await stream.send_all(data)


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
        self.in_flight = trio.Semaphore(gateway["requests_in_flight"])
        self.out_send, self.out_recv = trio.open_memory_channel[str | bytes](OUT_QUEUE)
        self.subscriptions: dict[str, trio.CancelScope] = {}

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            nursery.start_soon(self._writer)
            try:
                await self._reader()
            finally:
                nursery.cancel_scope.cancel()

    async def _writer(self) -> None:
        async for data in self.out_recv:
            while True:
                with trio.move_on_after(WRITE_TIMEOUT) as scope:
                    await self.ws.send_message(data)
                if scope.cancelled_caught:
                    log.warning("%s: client too slow to take a frame; disconnecting", self.path)
                    await self.ws.aclose(1008, "too slow")
                    return
                try:
                    # Frames already queued go out without another wait on the channel:
                    # each wait is a scheduler pass, a few ms on a loaded daemon.
                    data = self.out_recv.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break

    def _encode(self, frame: dict[str, Any]) -> str | bytes:
        try:
            return protocol.encode(frame, self.binary)
        except (TypeError, ValueError, OverflowError) as exc:
            return protocol.encode(
                protocol.error_frame(frame.get("id"), "internal", f"cannot encode: {exc}"),
                self.binary,
            )

    async def _send(self, frame: dict[str, Any]) -> None:
        await self.out_send.send(self._encode(frame))

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
            await self.in_flight.acquire()
            self.nursery.start_soon(self._handle, request_id, method, params)

    async def _handle(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        try:
            if method == "events.subscribe":
                await self._subscribe(request_id, params)
                return
            if method == "events.unsubscribe":
                session = params.get("session")
                scope = self.subscriptions.pop(session, None) if isinstance(session, str) else None
                if scope is not None:
                    scope.cancel()
                await self._send(protocol.result_frame(request_id, {"unsubscribed": bool(scope)}))
                return
            result = await self.shared.methods.call(method, params)
            frame = protocol.result_frame(request_id, result)
        except Exception as exc:
            frame = _error(request_id, method, exc)
        finally:
            self.in_flight.release()
        await self._send(frame)

    async def _subscribe(self, request_id: Any, params: dict[str, Any]) -> None:
        from .params import Params

        p = Params("events.subscribe", params)
        session = p.text("session")
        since = p.opt_int("since", None)
        epoch = p.opt_str("epoch")
        approvals = p.opt_bool("approvals", False)
        p.done()
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
                while True:
                    try:
                        events = await next_events(sub.receive)
                    except trio.EndOfChannel:
                        break
                    for out in events:
                        await self._send(protocol.event_frame(out, entry.path))
        if self.subscriptions.get(entry.session_id) is scope:
            del self.subscriptions[entry.session_id]


def _error(request_id: Any, method: str, exc: Exception) -> dict[str, Any]:
    code = error_code(exc)
    if code == "internal":
        log.error("%s failed", method, exc_info=exc)
        message = f"internal error in {method}: {type(exc).__name__}: {exc}"
    else:
        message = str(exc) or type(exc).__name__
    return protocol.error_frame(request_id, code, message)


__all__ = ["GatewayActor", "GetAddress"]


async def open_private_unix_listener(path: Path) -> trio.SocketListener:
    """A unix-socket listener only the user can connect to (mode 0600 before it listens).

    A socket file left by a killed daemon is replaced: the daemon lock (held by
    now) says no other daemon of this user runs.
    """
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        await sock.bind(str(path))
        os.chmod(path, 0o600)  # before listen(): no connection is accepted until then
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(sock)
