"""Carry out a resolved response on a connection: replies, streams, errors and faults."""

from __future__ import annotations

from . import render, wire
from .connection import Connection
from .records import Outcome, RequestRecord
from .render import Rendering
from .script import Endless, ErrorEvent, ErrorReply, Hang, Reply, Reset, Stall, Truncate

_JSON = (b"content-type", b"application/json")
_SSE = (b"content-type", b"text/event-stream; charset=utf-8")
_NO_CACHE = (b"cache-control", b"no-cache")


def _extra(pairs: tuple[tuple[str, str], ...]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs]


def _fmt(value: float | str) -> bytes:
    if isinstance(value, str):
        return value.encode("latin-1")
    return (b"%d" % value) if float(value).is_integer() else repr(float(value)).encode()


async def send_error_reply(conn: Connection, record: RequestRecord, err: ErrorReply) -> None:
    """An ``ErrorReply``: the status, the retry headers and the API error body."""
    if err.delay > 0:
        await conn.pause(err.delay)
    extra: list[tuple[bytes, bytes]] = []
    if err.retry_after is not None:
        extra.append((b"retry-after", _fmt(err.retry_after)))
    elif err.status == 429 and err.retry_after_ms is None:
        extra.append((b"retry-after", b"0"))
    if err.retry_after_ms is not None:
        extra.append((b"retry-after-ms", _fmt(err.retry_after_ms)))
    if err.should_retry is not None:
        extra.append((b"x-should-retry", b"true" if err.should_retry else b"false"))
    extra.extend(_extra(err.headers))
    await conn.send_error(
        record,
        err.status,
        err.message,
        error_type=err.error_type,
        error_code=err.error_code,
        extra=extra,
    )


async def send_json_reply(
    conn: Connection, record: RequestRecord, reply: Reply, ctx: Rendering
) -> None:
    """A non-streaming message body (faults cut it in half, see ``Truncate``)."""
    if reply.delay > 0:
        await conn.pause(reply.delay)
    body = render.message_json(reply, ctx)
    headers = [_JSON, (b"request-id", record.request_id.encode()), *_extra(reply.headers)]
    fault = reply.fault
    if fault is None or isinstance(fault, ErrorEvent):
        await conn.send_full(record, 200, headers, body)
        return
    await conn.send_partial(record, 200, headers, body)
    if isinstance(fault, Reset):
        await conn.reset(record)
    elif isinstance(fault, Truncate):
        await conn.close(record, Outcome.TRUNCATED_BY_SERVER)
    else:
        await conn.wait_forever()


async def send_sse_reply(
    conn: Connection,
    record: RequestRecord,
    reply: Reply,
    ctx: Rendering,
    blocks: list[bytes] | None = None,
) -> None:
    """A streamed message, with its scripted delays and fault (``blocks``: cached block events)."""
    if reply.delay > 0:
        await conn.pause(reply.delay)
    events = render.sse_events(reply, ctx, blocks)
    fault = reply.fault
    if fault is not None:
        events = events[: max(0, fault.after)]
        if isinstance(fault, ErrorEvent):
            events.append(wire.error_event(fault.error_type, fault.message))
    clean_end = fault is None or isinstance(fault, ErrorEvent | Truncate)
    headers = [_SSE, _NO_CACHE, (b"request-id", record.request_id.encode()), *_extra(reply.headers)]
    delay = reply.event_delay
    if delay <= 0:
        await conn.start_stream(record, headers, b"".join(events), end=clean_end)
        record.events_sent = len(events)
    else:
        await conn.start_stream(record, headers, events[0] if events else b"")
        record.events_sent = 1 if events else 0
        for event in events[1:]:
            await conn.pause(delay)
            await conn.send_chunk(event)
            record.events_sent += 1
        if clean_end:
            await conn.end_stream(record)
    if isinstance(fault, Truncate):
        conn.provider.finish(record, Outcome.TRUNCATED_BY_SERVER)
    elif isinstance(fault, Reset):
        await conn.reset(record)
    elif isinstance(fault, Stall):
        await conn.wait_forever()
    else:
        conn.provider.finish(record, Outcome.COMPLETED)


async def send_endless(
    conn: Connection, record: RequestRecord, endless: Endless, ctx: Rendering, stream: bool
) -> None:
    """An ``Endless`` stream (or, for a JSON request, no headers at all)."""
    if not stream:
        await conn.wait_forever()
    headers = [_SSE, _NO_CACHE, (b"request-id", record.request_id.encode())]
    prologue = render.endless_prologue(ctx.model, ctx.message_id, ctx.input_tokens)
    await conn.start_stream(record, headers, b"".join(prologue))
    record.events_sent = len(prologue)
    delta = render.endless_delta(endless.delta)
    while True:
        await conn.pause(endless.event_delay)
        await conn.send_chunk(delta)
        record.events_sent += 1


async def hang(conn: Connection, record: RequestRecord, spec: Hang) -> None:
    """Send nothing; optionally close the connection after ``close_after`` seconds."""
    if spec.close_after is None:
        await conn.wait_forever()
    await conn.pause(spec.close_after)
    await conn.close(record, Outcome.CLOSED_BY_SERVER)
