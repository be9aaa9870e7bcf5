"""A WebSocket client for the gateway (the CLI, the tests and the benchmark use it).

::

    async with connect(endpoint) as client:
        session = await client.call("session.create")
        await client.call("events.subscribe", session=session["id"])
        await client.call("prompt.submit", session=session["id"], text="hi")
        async for event in client.events:
            ...
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgpack  # type: ignore[import-untyped]
import trio
import trio_websocket

from hermes.daemon.endpoint import Endpoint, NoDaemon, find_daemon

from . import frames as protocol

__all__ = ["Client", "Endpoint", "GatewayError", "NoDaemon", "connect", "find_daemon"]


class GatewayError(Exception):
    """An error answer: ``code`` and ``message`` as sent by the daemon."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Client:
    def __init__(self, ws: trio_websocket.WebSocketConnection, binary: bool) -> None:
        self.ws = ws
        self.binary = binary
        self._ids = itertools.count(1)
        self._pending: dict[Any, trio.MemorySendChannel[dict[str, Any]]] = {}
        self._events_send, self.events = trio.open_memory_channel[dict[str, Any]](100_000)
        self.dropped = 0
        """Events this client could not buffer (its reader never blocks)."""
        self.stray: list[dict[str, Any]] = []
        """Responses without a pending request (``id`` null: frame-level errors)."""

    async def send_raw(self, data: str | bytes) -> None:
        await self.ws.send_message(data)

    async def request(self, method: str, params: dict[str, Any], timeout: float = 30.0) -> Any:
        request_id = f"r{next(self._ids)}"
        send, receive = trio.open_memory_channel[dict[str, Any]](1)
        self._pending[request_id] = send
        try:
            frame = {"id": request_id, "method": method, "params": params}
            await self.ws.send_message(protocol.encode(frame, self.binary))
            with trio.fail_after(timeout):
                answer = await receive.receive()
        finally:
            self._pending.pop(request_id, None)
        if "error" in answer:
            error = answer["error"]
            raise GatewayError(str(error.get("code")), str(error.get("message")))
        return answer.get("result")

    async def call(self, method: str, timeout: float = 30.0, **params: Any) -> Any:
        return await self.request(method, params, timeout)

    async def _reader(self) -> None:
        while True:
            try:
                data = await self.ws.get_message()
            except trio_websocket.ConnectionClosed:
                break
            frame = (
                msgpack.unpackb(data, raw=False) if isinstance(data, bytes) else json.loads(data)
            )
            if "type" in frame and "id" not in frame:
                try:
                    self._events_send.send_nowait(frame)
                except trio.WouldBlock:
                    self.dropped += 1
                continue
            waiter = self._pending.get(frame.get("id"))
            if waiter is None:
                self.stray.append(frame)
                try:
                    self._events_send.send_nowait({"type": "stray", "payload": frame})
                except trio.WouldBlock:
                    self.dropped += 1
                continue
            waiter.send_nowait(frame)
        self._events_send.close()


@asynccontextmanager
async def connect(
    endpoint: Endpoint | tuple[str, str],
    *,
    use_msgpack: bool = False,
    token: str | None = None,
    max_message_size: int = 16 << 20,
) -> AsyncIterator[Client]:
    """Open a client; ``endpoint`` is an ``Endpoint`` or ``(ws_url, token)``."""
    url, default_token = (
        (endpoint.ws, endpoint.token) if isinstance(endpoint, Endpoint) else endpoint
    )
    given = default_token if token is None else token
    headers = [(b"authorization", f"Bearer {given}".encode())] if given else []
    subprotocols = [protocol.MSGPACK] if use_msgpack else [protocol.JSON]
    async with trio_websocket.open_websocket_url(
        url,
        extra_headers=headers,
        subprotocols=subprotocols,
        max_message_size=max_message_size,
        message_queue_size=64,
        connect_timeout=10,
        disconnect_timeout=2,
    ) as ws:
        client = Client(ws, use_msgpack)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client._reader)
            try:
                yield client
            finally:
                nursery.cancel_scope.cancel()
