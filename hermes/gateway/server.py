"""The gateway: one listener, one task per connection, WebSocket and HTTP on one port.

    gateway          GatewayActor: binds the port, writes the endpoint file, spawns connections
    |-- accept       Acceptor task: the accept loop (casts each new stream to the gateway)
    `-- conn-<n>     ConnectionActor task: reads the head, checks the token, then serves
                     a WebSocket (``WsClient``) or one HTTP request (``http_api``)

The acceptor and the connections are one-shot tasks (``actors.Task``): the
body runs from the spawn, and its end is the task's exit.

A connection that fails (bad frames, a peer that vanished) ends only itself;
its actor logs why. Every connection must present the token before anything
else is read or answered; until then it holds a handshake slot (``slots.py``)
and has ``gateway.handshake_timeout`` seconds. The unix socket serves only
the owner's uid (peer credentials).

A restarted gateway binds the port its first incarnation bound
(``Settings.gateway_port``). When the gateway stops, its WebSocket clients get
a last notice and a close frame: ``daemon.stopping`` and 1001 "daemon
stopping" when the daemon is stopping, ``gateway.restarting`` and 1012
"gateway restarting" when only the gateway is.

The gateway is the daemon's surface: it answers the calls of
``hermes/daemon/surface.py`` (the daemon imports nothing of this package).
The daemon's shutdown (``hermes/daemon/shutdown.py``) calls ``StopInput``
first: from then on a new connection is answered 503 ``shutting_down`` (once
its token checked) and a new request on an open WebSocket an error frame
``shutting_down``, while subscriptions go on streaming (the clients see their
turns cancelled). ``CloseSurfaces`` comes later: the listeners close, every
WebSocket client gets ``daemon.stopping`` and its 1001 close frame, and the
connections left (HTTP requests, event streams) are ended.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import trio
import trio_websocket

from actors import Actor, ActorRef, Exit, MailboxConfig, Overflow, Task, kill_all
from hermes.daemon.manager import ManagerClient, Status
from hermes.daemon.security import token_matches
from hermes.daemon.session_settings import memory_store
from hermes.daemon.settings import Settings
from hermes.daemon.surface import CloseSurfaces, GetAddress, StopInput
from hermes.store import StoreClient

from . import protocol
from .http_api import serve_http
from .methods import Methods, Services
from .origin_check import check_origin_and_host
from .slots import Slots
from .wire_http import (
    BadRequest,
    PrefixedStream,
    RequestHead,
    error_response,
    parse_head,
    read_head,
)
from .ws_client import SHUTTING_DOWN, WsClient

log = logging.getLogger("hermes.gateway")

CLOSE_GRACE = 1.5
"""Seconds a stopping gateway gives its WebSocket clients to get their last frames."""
REBIND_FOR = 5.0
"""Seconds a restarted gateway retries its old port while the old socket is closing."""
DRAIN = 1.0
"""Seconds an answered-and-refused connection is read (and discarded) before it closes."""
SEND_BUFFER = 64 * 1024
"""``SO_SNDBUF`` of a WebSocket connection (the kernel doubles it). Autotuned, it grows
to megabytes, and a full socket is writable again only once a third of it has
drained: a client reading 64 KB/s waited 20 s for one frame. Small, any window the
client opens lets a frame go on, and a slow client holds little kernel memory."""
SEND_CHUNK = 16 * 1024
"""A frame is written in pieces this large; each one written moves the write deadline."""


@attrs.frozen(slots=True)
class NewConnection:
    stream: trio.SocketStream
    unix: bool = False


STOPPING = (1001, "daemon stopping", "daemon.stopping")


@attrs.define
class Shared:
    """What every connection of one gateway incarnation needs."""

    settings: Settings
    token: str
    methods: Methods
    slots: Slots
    total: int = 0
    clients: set[WsClient] = attrs.field(factory=set)
    """Live WebSocket clients (told to close when the gateway stops)."""
    close: tuple[int, str] = (1001, "gateway stopping")
    """The close frame of a connection ended without the gateway's notice (a kill)."""
    stopping: bool = False
    """``StopInput`` came: new connections and requests are refused."""


class Acceptor(Task[None]):
    """The accept loop; it never returns (an exit is the gateway's crash)."""

    def __init__(
        self, gateway: ActorRef, listeners: list[tuple[trio.SocketListener, bool]]
    ) -> None:
        self.gateway = gateway
        self.listeners = listeners

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            for listener, unix in self.listeners:
                nursery.start_soon(self._accept, listener, unix)

    async def _accept(self, listener: trio.SocketListener, unix: bool) -> None:
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:  # EMFILE and friends: back off, keep serving
                log.warning("accept failed: %s", exc)
                await trio.sleep(0.1)
                continue
            await self.gateway.cast(NewConnection(stream, unix))


class GatewayActor(Actor):
    trap_exits = True
    mailbox = MailboxConfig(capacity=1000, overflow=Overflow.BLOCK)
    shutdown_budget = 3.0
    stop_children_concurrently = True
    """Connections are killed at once, not one by one (they were told to close first)."""

    def __init__(self, settings: Settings, token: str) -> None:
        self.settings = settings
        self.token = token
        self.listeners: list[trio.SocketListener] = []

    async def on_start(self) -> None:
        config = self.settings.config
        self.listeners = await self._bind()
        sockname = self.listeners[0].socket.getsockname()
        self.host, self.port = str(sockname[0]), int(sockname[1])
        self.settings.gateway_port = self.port
        kinds = [(listener, False) for listener in self.listeners]
        self.unix_path: str | None = None
        if config.get("daemon", "unix_socket"):
            path = self.settings.paths.socket_file
            unix = await open_private_unix_listener(path)
            self.listeners.append(unix)
            kinds.append((unix, True))
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
        gateway = config.values["gateway"]
        slots = Slots(
            gateway["max_unauthenticated"], gateway["max_connections"], gateway["owner_reserve"]
        )
        self.shared = Shared(self.settings, self.token, Methods(services), slots)
        self.acceptor = await self.ctx.spawn_task(
            Acceptor(self.ctx.self, kinds), name="accept", shutdown=0
        )
        status = await manager.call(Status())
        self._write_endpoint(status)
        self.ctx.start_task(self._close_clients_at_stop, name="close-clients")
        log.info("gateway listening on http://%s:%d (ws and http)", self.host, self.port)

    async def _bind(self) -> list[trio.SocketListener]:
        """Listen on the configured port, or on the one an earlier incarnation bound.

        A restart retries the old port for ``REBIND_FOR`` seconds while the old
        socket closes (``SO_REUSEADDR`` is set by trio); if it stays taken by
        someone else and no port was configured, any free port, with a warning.
        """
        config = self.settings.config
        host, port = config.get("daemon", "host"), config.get("daemon", "port")
        previous = self.settings.gateway_port
        if port or not previous:
            return await trio.open_tcp_listeners(port, host=host)
        deadline = trio.current_time() + REBIND_FOR
        while True:
            try:
                return await trio.open_tcp_listeners(previous, host=host)
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE or trio.current_time() >= deadline:
                    log.warning(
                        "cannot listen on port %d again (%s); taking a new port", previous, exc
                    )
                    return await trio.open_tcp_listeners(0, host=host)
            await trio.sleep(0.05)  # the old listener is still closing: retry shortly

    async def _close_clients_at_stop(self) -> None:
        """Waits until the gateway stops, then gives every WebSocket client its last
        notice and close frame (before the connections are killed)."""
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True, deadline=trio.current_time() + CLOSE_GRACE):
                await self._close_clients()

    async def _close_clients(self, close: tuple[int, str, str] | None = None) -> None:
        shared = self.shared
        with contextlib.suppress(Exception):
            await self.acceptor.kill()  # no new connections while the old ones close
        if not shared.clients:
            return
        parent = self.ctx.parent
        if close is not None:
            code, reason, kind = close
        elif parent is not None and _is_stopping(self.ctx.system.snapshot(), parent.path):
            code, reason, kind = STOPPING
        else:
            code, reason, kind = 1012, "gateway restarting", "gateway.restarting"
        shared.close = (code, reason)
        clients = list(shared.clients)
        for client in clients:
            client.begin_close(code, reason, kind)
        for client in clients:
            await client.done.wait()

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
            await self._connection(message.stream, message.unix)
        elif isinstance(message, Exit):
            if message.actor == self.acceptor and not self.shared.stopping:
                raise RuntimeError(f"the accept loop exited: {message.reason.describe()}")
        elif isinstance(message, GetAddress):
            return (self.host, self.port)
        elif isinstance(message, StopInput):
            self.shared.stopping = True
        elif isinstance(message, CloseSurfaces):
            return await self._close_surfaces()
        return None

    async def _close_surfaces(self) -> int:
        """``CloseSurfaces``: no new connections (refused, not left in the backlog), the
        WebSocket clients closed with their frames (within ``CLOSE_GRACE``), then every
        connection left ended."""
        self.shared.stopping = True  # the accept loop's exit is no failure now
        with contextlib.suppress(Exception):
            await self.acceptor.kill()
        for listener in self.listeners:
            with trio.move_on_after(0.5):
                await listener.aclose()
        connections = [ref for ref in self.ctx.children() if ref != self.acceptor]
        with trio.move_on_after(CLOSE_GRACE):
            await self._close_clients(STOPPING)
        await kill_all([ref for ref in self.ctx.children() if ref != self.acceptor])
        return len(connections)

    async def _connection(self, stream: trio.SocketStream, unix: bool) -> None:
        shared = self.shared
        if unix and not _peer_is_owner(stream):
            await trio.aclose_forcefully(stream)
            return
        shared.total += 1
        conn = shared.total
        handshake = trio.CancelScope()
        shared.slots.admit(conn, handshake, unix)
        try:
            await self.ctx.spawn_task(
                ConnectionActor(stream, shared, conn, unix, handshake),
                name=f"conn-{conn}",
                shutdown=0,
            )
        except BaseException:
            shared.slots.release(conn)
            await trio.aclose_forcefully(stream)
            raise

    async def on_stop(self, reason: object) -> None:
        for listener in self.listeners:
            with trio.move_on_after(0.5):
                await listener.aclose()
        if getattr(self, "unix_path", None):
            with contextlib.suppress(OSError):
                os.unlink(self.settings.paths.socket_file)


class ConnectionActor(Task[None]):
    """One client connection; its whole life is the task's body."""

    mailbox = MailboxConfig(capacity=4, overflow=Overflow.FAIL)

    def __init__(
        self,
        stream: trio.SocketStream,
        shared: Shared,
        conn: int,
        unix: bool,
        handshake: trio.CancelScope,
    ) -> None:
        self.stream = stream
        self.shared = shared
        self.conn = conn
        self.unix = unix
        self.handshake = handshake
        """Cancelled by the gateway to drop this connection while it is the oldest handshake."""

    async def run(self) -> None:
        try:
            await self._serve()
        except* (trio.BrokenResourceError, trio.ClosedResourceError, trio_websocket.HandshakeError):
            pass  # the peer went away
        except* Exception as group:
            log.warning("connection failed", exc_info=group)
        finally:
            self.shared.slots.release(self.conn)
            await trio.aclose_forcefully(self.stream)

    async def _serve(self) -> None:
        stream = self.stream
        with self.handshake:
            got = await self._handshake()
        if self.handshake.cancelled_caught:
            await _refuse(
                stream,
                error_response(
                    503, "overloaded", "dropped: too many connections waiting for their handshake"
                ),
                drain=0.0,
            )
            return
        if got is None:
            return
        if self.shared.stopping:
            await _refuse(stream, error_response(503, "shutting_down", SHUTTING_DOWN))
            return
        head, head_bytes, rest = got
        if head.is_websocket:
            await self._websocket(PrefixedStream(stream, head_bytes + rest))
        else:
            await serve_http(stream, head, rest, self.shared.methods, self.shared.settings)

    async def _handshake(self) -> tuple[RequestHead, bytes, bytes] | None:
        """Read the head and check the token, then take an authenticated slot:
        ``(head, its bytes, what followed it)``, or None once the connection is answered."""
        stream = self.stream
        timeout: float = self.shared.settings.config.values["gateway"]["handshake_timeout"]
        try:
            with trio.fail_after(timeout):
                got = await read_head(stream)
            if got is None:
                return None
            head_bytes, rest = got
            head = parse_head(head_bytes)
            check_origin_and_host(head, stream, self.shared.settings.config)
        except trio.TooSlowError:
            message = f"request head not received in {timeout:g} s"
            await _refuse(stream, error_response(408, "timeout", message))
            return None
        except BadRequest as exc:
            await _refuse(stream, error_response(exc.status, exc.code, str(exc)))
            return None
        if not token_matches(self.shared.token, head.token):
            what = "missing" if not head.token else "wrong"
            await _refuse(
                stream,
                error_response(
                    401,
                    "unauthorized",
                    f"{what} token: send 'Authorization: Bearer <token>' with the token from "
                    "the daemon's runtime directory (hermes daemon status shows where)",
                ),
            )
            return None
        slots = self.shared.slots
        if not slots.authenticate(self.conn, self.unix):
            limit = slots.max_connections
            await _refuse(
                stream, error_response(503, "overloaded", f"too many connections ({limit})")
            )
            return None
        return head, head_bytes, rest

    async def _websocket(self, stream: PrefixedStream) -> None:
        gateway = self.shared.settings.config.values["gateway"]
        max_frame: int = gateway["max_frame_bytes"]
        with contextlib.suppress(OSError):
            self.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        watched = _ProgressStream(stream)
        async with trio.open_nursery() as nursery:
            request = await trio_websocket.wrap_server_stream(
                nursery,
                watched,
                message_queue_size=4,
                max_message_size=4 * max_frame,
            )
            offered = request.proposed_subprotocols
            chosen = next((p for p in protocol.SUBPROTOCOLS if p in offered), None)
            ws = await request.accept(subprotocol=chosen)
            client = WsClient(ws, self.shared, chosen == protocol.MSGPACK, self.ctx.path)
            watched.on_progress = client.wrote_some
            self.shared.clients.add(client)
            try:
                await client.run()
            finally:
                self.shared.clients.discard(client)
                client.done.set()
                nursery.cancel_scope.cancel()


async def _refuse(stream: trio.SocketStream, response: bytes, drain: float = DRAIN) -> None:
    """Answer and close so that the peer reads the answer: send it, end our side,
    then read and discard what the peer still sends for up to ``drain`` seconds
    (closing with unread data would make the kernel reset the connection)."""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        with trio.move_on_after(2.0):
            await stream.send_all(response)
            await stream.send_eof()
            with trio.move_on_after(drain):
                received = 0
                while received < 1 << 20 and (chunk := await stream.receive_some(65536)):
                    received += len(chunk)


class _ProgressStream(trio.abc.Stream):
    """Writes in ``SEND_CHUNK`` pieces and calls ``on_progress`` after each one."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.on_progress: Callable[[], None] | None = None

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        return bytes(await self.stream.receive_some(max_bytes))

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        for start in range(0, len(view), SEND_CHUNK):
            await self.stream.send_all(view[start : start + SEND_CHUNK])
            if self.on_progress is not None:
                self.on_progress()
        if not view:
            await self.stream.send_all(view)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.stream.aclose()


def _peer_is_owner(stream: trio.SocketStream) -> bool:
    """The unix socket's peer runs as this daemon's uid (``SO_PEERCRED``)."""
    try:
        creds = stream.socket.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
        )
    except OSError as exc:
        log.warning("unix socket: cannot read the peer's credentials (%s); refused", exc)
        return False
    pid, uid, _ = struct.unpack("3i", creds)
    if uid == os.getuid():
        return True
    log.warning("unix socket: refused pid %d of uid %d (serves uid %d only)", pid, uid, os.getuid())
    return False


def _is_stopping(tree: dict[str, Any], path: str) -> bool:
    """In a ``system.snapshot()``: the actor at ``path`` is stopping (or gone)."""
    stack = list(tree.get("children", ()))
    while stack:
        node = stack.pop()
        if node["path"] == path:
            return bool(node["state"] != "running")
        if path.startswith(node["path"] + "/"):
            stack.extend(node.get("children", ()))
    return True


__all__ = ["SHUTTING_DOWN", "GatewayActor"]


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
