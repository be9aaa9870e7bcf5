"""``python -m bench.suite.floor_server --token T``: the cancel storm's floor, a bare trio server.

It answers the request shapes the storm sends the daemon with none of the
daemon's work behind them: one port, WebSocket and HTTP told apart as the
gateway does (``hermes.gateway.wire_http``: the head, the token), a WebSocket
frame answered at once with a result frame echoing its method and params
(``trio-websocket``), an HTTP request with ``{"result": ...}`` in the gateway's
framing (``response_bytes``: ``Content-Length``, ``Connection: close``), then
the connection closed. It runs as a process of its own beside the daemon, so
it pays the same scheduling delays under the same storm (``floor.py``).
"""

from __future__ import annotations

import argparse
import hmac
import signal

import trio
import trio_websocket

from hermes.gateway.frames import MSGPACK, SUBPROTOCOLS, ProtocolError, decode, encode, result_frame
from hermes.gateway.wire_http import (
    BadRequest,
    PrefixedStream,
    RequestHead,
    error_response,
    json_body,
    parse_head,
    read_head,
    response_bytes,
)

MAX_BODY = 1 << 20


async def _websocket(stream: PrefixedStream) -> None:
    async with trio.open_nursery() as nursery:
        request = await trio_websocket.wrap_server_stream(nursery, stream, message_queue_size=4)
        chosen = next((p for p in SUBPROTOCOLS if p in request.proposed_subprotocols), None)
        ws = await request.accept(subprotocol=chosen)
        binary = chosen == MSGPACK
        while True:
            try:
                data = await ws.get_message()
                request_id, method, params = decode(data, binary)
                answer = result_frame(request_id, {"method": method, "params": params})
                await ws.send_message(encode(answer, binary))
            except trio_websocket.ConnectionClosed:
                break
            except ProtocolError:
                continue
        nursery.cancel_scope.cancel()


async def _http(stream: trio.SocketStream, head: RequestHead, rest: bytes) -> None:
    length = min(int(head.header("content-length") or 0), MAX_BODY)
    body = rest
    while len(body) < length and (chunk := await stream.receive_some(65536)):
        body += chunk
    result = {"method": head.method, "path": head.path, "body_bytes": len(body)}
    await stream.send_all(response_bytes(200, json_body({"result": result})))


async def _connection(stream: trio.SocketStream, token: str) -> None:
    try:
        got = await read_head(stream)
        if got is None:
            return
        head_bytes, rest = got
        head = parse_head(head_bytes)
        if not hmac.compare_digest((head.token or "").encode(), token.encode()):
            await stream.send_all(error_response(401, "unauthorized", "wrong token"))
        elif head.is_websocket:
            await _websocket(PrefixedStream(stream, head_bytes + rest))
        else:
            await _http(stream, head, rest)
    except (BadRequest, ValueError, trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    except trio_websocket.HandshakeError:
        pass
    finally:
        await trio.aclose_forcefully(stream)


async def serve(token: str) -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def handler(stream: trio.SocketStream) -> None:
                await _connection(stream, token)

            await nursery.start(trio.serve_listeners, handler, listeners)
            print(f"floor listening on http://127.0.0.1:{port}", flush=True)
            async for _ in signals:
                break
            nursery.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.suite.floor_server")
    parser.add_argument("--token", required=True)
    trio.run(serve, parser.parse_args().token)


if __name__ == "__main__":
    main()
