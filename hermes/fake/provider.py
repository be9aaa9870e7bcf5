"""The fake provider: listener, routing, authentication, script and observability in one object.

In a test::

    async with open_fake_provider(api_key="test-key") as fake:
        fake.enqueue(Reply.of("Hello"))
        async with AsyncAnthropic(api_key="test-key", base_url=fake.base_url, ...) as client:
            ...
        assert fake.requests[-1].body["model"] == "..."
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, NamedTuple

import trio

from . import handlers, render, wire
from .caching import PromptCache, estimate_tokens
from .connection import Connection
from .demo import demo_reply
from .http11 import RequestHead
from .records import Outcome, RequestRecord
from .render import Rendering
from .request import MessagesRequest, validate_messages_body
from .script import Endless, ErrorReply, Hang, Match, Reply, Response, Rule, Script, Scripted

#: Models listed by ``GET /v1/models`` (any model name is accepted unless ``known_models`` is set).
DEFAULT_MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1")

#: Request bodies above this get 413 ``request_too_large`` (the real limit, via Cloudflare).
MAX_BODY_BYTES = 32 * 1024 * 1024

_RENDER_CACHE_SIZE = 256

_MODEL_PATH = re.compile(r"^/v1/models/([^/]+)$")


class FakeProvider:
    """A fake Anthropic Messages API server (see ``docs/fake-provider.md``).

    Construct it and run ``serve`` in a nursery, or use ``open_fake_provider``.

    Args:
        api_key: the key clients must send (``x-api-key`` or ``Authorization:
            Bearer``); ``None`` accepts any request, with or without a key.
        demo: answer unscripted requests with the built-in demo model; if False
            they get a 500 ``api_error`` saying nothing was scripted.
        demo_event_delay: seconds between the demo model's SSE events.
        known_models: if set, a request for any other model gets 404
            ``not_found_error``; ``GET /v1/models`` lists these (else ``DEFAULT_MODELS``).
        record_limit: keep only the most recent records (``None``: all).
        max_body_bytes: larger request bodies get 413.
        min_cacheable_tokens: prompt-cache minimum (see ``caching.PromptCache``).
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        demo: bool = True,
        demo_event_delay: float = 0.0,
        known_models: Iterable[str] | None = None,
        record_limit: int | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        min_cacheable_tokens: int = 0,
    ) -> None:
        self.api_key = api_key
        self._bearer = f"Bearer {api_key}".encode() if api_key is not None else None
        self._key = api_key.encode() if api_key is not None else None
        self.known_models = frozenset(known_models) if known_models is not None else None
        self.max_body_bytes = max_body_bytes
        self.demo_event_delay = demo_event_delay
        self.script = Script(self._demo if demo else None)
        self.cache = PromptCache(min_tokens=min_cacheable_tokens)
        #: Every request seen (most recent last), bounded by ``record_limit``.
        self.requests: deque[RequestRecord] = deque(maxlen=record_limit)
        #: Exceptions raised inside the fake (bugs or failing responders).
        self.errors: list[Exception] = []
        #: Requests received so far.
        self.total = 0
        #: Requests whose exchange has not ended.
        self.in_flight = 0
        #: Connections open now, and accepted in total.
        self.connections = 0
        self.connections_total = 0
        self.host = "127.0.0.1"
        self.port = 0
        #: Called with each record when its exchange ends (for logging).
        self.on_finish: Callable[[RequestRecord], None] | None = None
        self._tool_seq = 0
        self._arrival: trio.Event | None = None
        self._idle: trio.Event | None = None
        self._conn_closed: trio.Event | None = None
        self._rendered: dict[int, tuple[Reply, list[bytes]]] = {}

    # ------------------------------------------------------------ scripting

    def enqueue(self, *responses: Scripted) -> None:
        """Queue responses for the next requests no rule matches (see ``Script.enqueue``)."""
        self.script.enqueue(*responses)

    def when(
        self,
        response: Scripted,
        *,
        times: int | None = None,
        last_user_text: str | re.Pattern[str] | None = None,
        tool_result_ids: Iterable[str] | None = None,
        model: str | None = None,
        stream: bool | None = None,
        predicate: Callable[[MessagesRequest], bool] | None = None,
    ) -> Rule:
        """Answer requests meeting every given condition with ``response`` (see ``Match``).

        With no condition the rule matches every request. ``times``: how many
        replies before the rule is dropped (``None``: never dropped).
        """
        return self.script.when(
            response,
            times=times,
            last_user_text=last_user_text,
            tool_result_ids=tool_result_ids,
            model=model,
            stream=stream,
            predicate=predicate,
        )

    def match(self, match: Match, response: Scripted, *, times: int | None = None) -> Rule:
        """Like ``when`` with a prebuilt ``Match``."""
        return self.script.when(response, match=match, times=times)

    # -------------------------------------------------------- observability

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT`` to pass as the SDK's ``base_url``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def message_requests(self) -> list[RequestRecord]:
        """Records of ``POST /v1/messages`` requests only."""
        return [r for r in self.requests if r.path == "/v1/messages"]

    async def wait_for_requests(self, n: int) -> RequestRecord:
        """Wait until ``n`` requests have arrived in total; return the ``n``-th record."""
        while self.total < n:
            if self._arrival is None:
                self._arrival = trio.Event()
            await self._arrival.wait()
        for record in self.requests:
            if record.seq == n:
                return record
        raise LookupError(f"request {n} is no longer recorded (record_limit)")

    async def wait_connections(self, count: int = 0) -> None:
        """Wait until at most ``count`` connections are open (0: the client let go of all)."""
        while self.connections > count:
            if self._conn_closed is None:
                self._conn_closed = trio.Event()
            await self._conn_closed.wait()

    async def wait_idle(self) -> None:
        """Wait until no request is in flight."""
        while self.in_flight:
            if self._idle is None:
                self._idle = trio.Event()
            await self._idle.wait()

    def new_record(
        self, head: RequestHead, body: bytes, started_at: float, started_mono: float
    ) -> RequestRecord:
        """Register a request that has fully arrived (called by ``Connection``)."""
        self.total += 1
        self.in_flight += 1
        seq = self.total
        record = RequestRecord(
            seq,
            f"req_fake_{seq:012d}",
            head.method,
            head.path,
            head.headers,
            body,
            started_at,
            started_mono,
        )
        self.requests.append(record)
        if self._arrival is not None:
            self._arrival.set()
            self._arrival = None
        return record

    def finish(self, record: RequestRecord, outcome: Outcome) -> None:
        """End ``record``'s exchange with ``outcome`` (first call wins)."""
        if record.outcome is not None:
            return
        record._finish(outcome, trio.current_time(), time.monotonic())
        self.in_flight -= 1
        if self.on_finish is not None:
            self.on_finish(record)
        if not self.in_flight and self._idle is not None:
            self._idle.set()
            self._idle = None

    # ------------------------------------------------------------- serving

    async def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        task_status: trio.TaskStatus[FakeProvider] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen on ``host:port`` (0: any free port) and serve until cancelled.

        ``task_status.started`` reports the provider once ``port`` is known.
        """
        listeners = await trio.open_tcp_listeners(port, host=host)
        sockname = listeners[0].socket.getsockname()
        self.host, self.port = host, sockname[1]
        async with trio.open_nursery() as nursery:
            task_status.started(self)
            await trio.serve_listeners(self._handle_stream, listeners, handler_nursery=nursery)

    async def _handle_stream(self, stream: trio.SocketStream) -> None:
        self.connections += 1
        self.connections_total += 1
        try:
            await Connection(stream, self).run()
        finally:
            self.connections -= 1
            if self._conn_closed is not None:
                self._conn_closed.set()
                self._conn_closed = None

    # ------------------------------------------------------------- routing

    def _authorized(self, headers: Sequence[tuple[bytes, bytes]]) -> bool:
        if self._key is None:
            return True
        for name, value in headers:
            if (name == b"x-api-key" and value == self._key) or (
                name == b"authorization" and value == self._bearer
            ):
                return True
        return False

    async def handle(self, conn: Connection, record: RequestRecord, head: RequestHead) -> None:
        """Route one request and answer it (called by ``Connection`` for each request)."""
        path, method = record.path, record.method
        if path == "/v1/messages":
            route = "messages"
        elif path == "/v1/messages/count_tokens":
            route = "count_tokens"
        elif path == "/v1/models" or _MODEL_PATH.match(path):
            route = "models"
        else:
            record.responder = "not found"
            await conn.send_error(record, 404, f"Not found: {method} {path}")
            return
        expected = "GET" if route == "models" else "POST"
        if method != expected:
            record.responder = "method"
            await conn.send_error(record, 405, f"Method {method} not allowed for {path}")
            return
        if not self._authorized(head.headers):
            record.responder = "auth"
            await conn.send_error(record, 401, "invalid x-api-key")
            return
        if route == "models":
            await self._models(conn, record)
            return
        try:
            body = json.loads(record.raw_body)
        except ValueError as exc:
            record.responder = "bad json"
            await conn.send_error(record, 400, f"Invalid JSON in request body: {exc}")
            return
        if self.requests.maxlen != 0:
            record.body = body  # for whoever reads the records; see ``_plan`` otherwise
        problem = validate_messages_body(body, count_tokens=route == "count_tokens")
        if problem is not None:
            record.responder = "invalid"
            await conn.send_error(record, 400, problem)
            return
        if self.known_models is not None and body["model"] not in self.known_models:
            record.responder = "unknown model"
            await conn.send_error(record, 404, f"model: {body['model']}")
            return
        if route == "count_tokens":
            record.responder = "count_tokens"
            tokens = estimate_tokens(len(record.raw_body))
            await conn.send_full(
                record, 200, _json_headers(record), wire.dumps({"input_tokens": tokens})
            )
            return
        plan = self._plan(record, MessagesRequest(body, record))
        # The parsed body (the whole conversation: a dict and a list per message) is not
        # needed once the reply is chosen, and a streamed reply lasts seconds. Held that
        # long, 100 streaming sessions kept ~10k such containers alive in the daemon,
        # each one traversed by every young collection (bench gateway, ws_cancel p99).
        del body
        await self._messages(conn, record, plan)

    def _plan(self, record: RequestRecord, req: MessagesRequest) -> _Plan:
        """Everything a reply needs from the request: the response, its source and rendering."""
        response, source = self.script.resolve(req)
        record.responder = _label(response, source)
        if isinstance(response, ErrorReply | Hang):
            return _Plan(response, source, None, req.stream)
        ctx = Rendering(
            req.model,
            f"msg_fake_{record.seq:012d}",
            self._next_tool_id,
            self.cache.usage(req.body, record.raw_body),
        )
        return _Plan(response, source, ctx, req.stream)

    async def _messages(self, conn: Connection, record: RequestRecord, plan: _Plan) -> None:
        response, source, ctx = plan.response, plan.source, plan.ctx
        if isinstance(response, ErrorReply):
            await handlers.send_error_reply(conn, record, response)
            return
        if isinstance(response, Hang):
            await handlers.hang(conn, record, response)
            return
        assert ctx is not None
        if isinstance(response, Endless):
            await handlers.send_endless(conn, record, response, ctx, plan.stream)
        elif plan.stream:
            blocks = None
            if source != "fallback" and render.cacheable(response):
                blocks = self._block_events(response)
            await handlers.send_sse_reply(conn, record, response, ctx, blocks)
        else:
            await handlers.send_json_reply(conn, record, response, ctx)

    def _block_events(self, reply: Reply) -> list[bytes]:
        """The block events of a scripted reply, rendered once per reply object."""
        cached = self._rendered.get(id(reply))
        if cached is not None and cached[0] is reply:
            return cached[1]
        events = render.block_events(reply, render.explicit_tool_ids(reply))
        if len(self._rendered) >= _RENDER_CACHE_SIZE:
            del self._rendered[next(iter(self._rendered))]
        self._rendered[id(reply)] = (reply, events)
        return events

    def _next_tool_id(self) -> str:
        self._tool_seq += 1
        return f"toolu_fake_{self._tool_seq:012d}"

    def _demo(self, req: MessagesRequest) -> Response:
        return demo_reply(req, event_delay=self.demo_event_delay)

    async def _models(self, conn: Connection, record: RequestRecord) -> None:
        record.responder = "models"
        names = sorted(self.known_models) if self.known_models is not None else DEFAULT_MODELS
        models = [
            {"type": "model", "id": n, "display_name": n, "created_at": "2025-01-01T00:00:00Z"}
            for n in names
        ]
        found = _MODEL_PATH.match(record.path)
        if found is None:
            body: Any = {
                "data": models,
                "has_more": False,
                "first_id": models[0]["id"] if models else None,
                "last_id": models[-1]["id"] if models else None,
            }
        else:
            body = next((m for m in models if m["id"] == found.group(1)), None)
            if body is None:
                await conn.send_error(record, 404, f"model: {found.group(1)}")
                return
        await conn.send_full(record, 200, _json_headers(record), wire.dumps(body))


class _Plan(NamedTuple):
    """A request's reply, decided: what ``_messages`` sends (no reference to the body)."""

    response: Response
    source: str
    ctx: Rendering | None
    stream: bool


def _json_headers(record: RequestRecord) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), (b"request-id", record.request_id.encode())]


def _label(response: Response, source: str) -> str:
    kind = {Reply: "reply", ErrorReply: "error", Hang: "hang", Endless: "endless"}[type(response)]
    return "demo" if source == "fallback" and kind == "reply" else f"{source} {kind}"


@asynccontextmanager
async def open_fake_provider(
    *, host: str = "127.0.0.1", port: int = 0, **options: Any
) -> AsyncIterator[FakeProvider]:
    """Run a ``FakeProvider`` in a nursery of its own for the ``async with`` body.

    Keyword options are ``FakeProvider``'s (``api_key``, ``demo``, ...). On exit
    the listener and every open connection are cancelled; requests still in
    flight end as ``Outcome.SERVER_SHUTDOWN``.
    """
    provider = FakeProvider(**options)
    async with trio.open_nursery() as nursery:
        await nursery.start(provider.serve, host, port)
        try:
            yield provider
        finally:
            nursery.cancel_scope.cancel()
