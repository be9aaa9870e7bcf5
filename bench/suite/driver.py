"""Drive the daemon over WebSocket: a pool of connections, per-session event feeds, turns.

A ``Pool`` holds a few connections (sessions are spread over them); each
connection's reader routes events by session into a ``Feed``, which a
caller waits on with a predicate. ``run_turn`` submits one prompt and waits
for that prompt's ``turn.completed``: every accepted prompt ends as an
answer (``completed``), a recorded failure (any other reason) or ``lost``
(nothing within the timeout, which breaks the suite's invariant).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from typing import Any

import attrs
import httpx2
import trio

from hermes.gateway.client import Client, Endpoint, GatewayError, connect

Event = dict[str, Any]
TURN_TIMEOUT = 120.0


class Feed:
    """The events of one session, as they arrive."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._changed = trio.Event()

    def add(self, event: Event) -> None:
        self.events.append(event)
        self._changed.set()
        self._changed = trio.Event()

    async def wait(self, match: Callable[[Event], bool], start: int = 0) -> tuple[int, Event]:
        """The first event at index ``start`` or later that ``match``es, and its index."""
        index = start
        while True:
            while index < len(self.events):
                if match(self.events[index]):
                    return index, self.events[index]
                index += 1
            await self._changed.wait()


@attrs.define
class Conn:
    """One connection and the feeds of the sessions it follows."""

    client: Client
    feeds: dict[str, Feed] = attrs.field(factory=dict)
    dropped: int = 0

    async def route(self) -> None:
        async for event in self.client.events:
            if event.get("type") == "events.dropped":
                self.dropped += int((event.get("payload") or {}).get("count", 1))
            feed = self.feeds.get(event.get("session", ""))
            if feed is not None:
                feed.add(event)


@attrs.frozen
class SessionRef:
    id: str
    conn: Conn
    feed: Feed

    async def call(self, method: str, timeout: float = 30.0, **params: Any) -> Any:
        return await self.conn.client.call(method, timeout=timeout, session=self.id, **params)


class Pool:
    """``size`` connections; ``session(i)`` creates a session on connection ``i % size``.

    ``http`` is one HTTP client for the daemon's HTTP API (the daemon closes
    each connection after one request, so every request opens a new one).
    """

    def __init__(self, endpoint: Endpoint, conns: list[Conn], http: httpx2.AsyncClient) -> None:
        self.endpoint = endpoint
        self.conns = conns
        self.http = http

    @property
    def client(self) -> Client:
        return self.conns[0].client

    @property
    def dropped(self) -> int:
        return sum(c.dropped for c in self.conns)

    async def session(self, index: int, **params: Any) -> SessionRef:
        conn = self.conns[index % len(self.conns)]
        created = await conn.client.call("session.create", **params)
        return await self.follow(created["id"], index)

    async def follow(self, session_id: str, index: int = 0) -> SessionRef:
        conn = self.conns[index % len(self.conns)]
        feed = Feed()
        conn.feeds[session_id] = feed
        await conn.client.call("events.subscribe", session=session_id)
        return SessionRef(session_id, conn, feed)

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """POST ``body`` as JSON to the daemon's HTTP API: (status, decoded answer)."""
        response = await self.http.post(
            self.endpoint.url + path,
            json=body,
            headers={"Authorization": f"Bearer {self.endpoint.token}"},
        )
        return response.status_code, response.json()

    async def forget(self, ref: SessionRef) -> None:
        """Stop following ``ref`` (its feed is dropped)."""
        ref.conn.feeds.pop(ref.id, None)
        with suppress(GatewayError):
            await ref.conn.client.call("events.unsubscribe", session=ref.id)


@asynccontextmanager
async def open_pool(endpoint: Endpoint, size: int) -> AsyncIterator[Pool]:
    async with AsyncExitStack() as stack:
        conns = [Conn(await stack.enter_async_context(connect(endpoint))) for _ in range(size)]
        http = await stack.enter_async_context(httpx2.AsyncClient(trust_env=False, timeout=60.0))
        async with trio.open_nursery() as nursery:
            for conn in conns:
                nursery.start_soon(conn.route)
            try:
                yield Pool(endpoint, conns, http)
            finally:
                nursery.cancel_scope.cancel()


@attrs.frozen
class Turn:
    """How one prompt ended: ``reason`` is the turn's, or ``rejected`` / ``lost``."""

    reason: str
    seconds: float
    text: str = ""
    detail: str = ""

    @property
    def accepted(self) -> bool:
        return self.reason != "rejected"


def matches(kind: str, **payload: Any) -> Callable[[Event], bool]:
    """A predicate: an event of type ``kind`` whose payload has these values."""

    def match(event: Event) -> bool:
        if event.get("type") != kind:
            return False
        got = event.get("payload") or {}
        return all(got.get(k) == v for k, v in payload.items())

    return match


async def run_turn(ref: SessionRef, text: str, timeout: float = TURN_TIMEOUT) -> Turn:
    """Submit ``text`` (unique in the session) and wait for its turn to end."""
    start_index = len(ref.feed.events)
    start = time.perf_counter()
    try:
        accepted = await ref.call("prompt.submit", text=text)
    except GatewayError as exc:
        return Turn("rejected", time.perf_counter() - start, detail=f"{exc.code}: {exc.message}")
    with trio.move_on_after(timeout):
        turn = accepted.get("turn") if accepted.get("how") == "started" else None
        if turn is None:  # queued behind a turn the machine started: find ours by its prompt
            _, started = await ref.feed.wait(matches("turn.started", prompt=text), start_index)
            turn = started["payload"]["turn"]
        _, done = await ref.feed.wait(matches("turn.completed", turn=turn), start_index)
        payload = done["payload"]
        return Turn(
            payload["reason"],
            time.perf_counter() - start,
            payload.get("text", ""),
            payload.get("detail", ""),
        )
    return Turn("lost", time.perf_counter() - start, detail=f"no turn.completed in {timeout:g}s")


@attrs.define
class Tally:
    """Outcomes of many turns: the latencies of answered ones, counts by reason."""

    latencies: list[float] = attrs.field(factory=list)
    reasons: Counter[str] = attrs.field(factory=Counter)
    details: list[str] = attrs.field(factory=list)

    def add(self, turn: Turn) -> None:
        self.reasons[turn.reason] += 1
        if turn.reason == "completed":
            self.latencies.append(turn.seconds)
        elif len(self.details) < 10 and turn.detail:
            self.details.append(f"{turn.reason}: {turn.detail}")

    @property
    def accepted(self) -> int:
        return sum(n for r, n in self.reasons.items() if r != "rejected")

    @property
    def answered(self) -> int:
        return self.reasons["completed"]

    @property
    def lost(self) -> int:
        return self.reasons["lost"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "answered": self.answered,
            "failed_recorded": self.accepted - self.answered - self.lost,
            "lost": self.lost,
            "rejected": self.reasons["rejected"],
            "by_reason": dict(self.reasons),
            "examples": self.details,
        }
