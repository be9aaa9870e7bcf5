"""Request records, counts, and disconnects seen within 50 ms of a client-side cancel."""

from __future__ import annotations

import gc
import json
import time

import anthropic
import pytest
import trio

from hermes.fake import Endless, FakeProvider, Hang, Outcome, Reply, Stall, Text, open_fake_provider

from .conftest import API_KEY, MODEL, make_client, user

#: The issue's bound: the server must see a cancelled stream's disconnect this fast.
DISCONNECT_BOUND = 0.05


async def test_record_contents(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.enqueue(Reply.of("hello"))
    before_trio, before_mono = trio.current_time(), time.monotonic()
    with trio.fail_after(5):
        await client.messages.create(
            model=MODEL, max_tokens=7, messages=user("hi there"), metadata={"user_id": "u1"}
        )
    (record,) = fake.requests
    assert record.seq == 1 and record.method == "POST" and record.path == "/v1/messages"
    assert record.body["max_tokens"] == 7
    assert record.body["messages"] == user("hi there")
    assert record.body["metadata"] == {"user_id": "u1"}
    assert record.stream is False
    assert record.headers["authorization"] == f"Bearer {API_KEY}"
    assert record.headers["x-stainless-async"] == "async:trio"
    assert record.headers["anthropic-version"]
    assert record.retry_count == 0
    assert record.status == 200 and record.responder == "queue reply"
    assert record.outcome is Outcome.COMPLETED
    assert before_trio <= record.started_at <= trio.current_time()
    assert before_mono <= record.started_monotonic <= time.monotonic()
    assert record.completed_monotonic is not None
    assert record.started_monotonic <= record.completed_monotonic
    assert record.ended_monotonic == pytest.approx(record.completed_monotonic, abs=0.01)
    assert record.disconnected_monotonic is None
    assert record.duration is not None and record.duration >= 0
    assert record.request_id.startswith("req_")
    assert fake.total == 1 and fake.in_flight == 0
    assert fake.message_requests == [record]
    assert "completed" in repr(record)


async def test_in_flight_counts(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.when(Reply.of(Text(deltas=("a", "b")), event_delay=0.2), last_user_text="slow")

    async def consume() -> None:
        stream = await client.messages.create(
            model=MODEL, max_tokens=5, messages=user("slow"), stream=True
        )
        async with stream:
            async for _ in stream:
                pass

    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(consume)
        with trio.fail_after(5):
            await fake.wait_for_requests(3)
        assert fake.in_flight == 3 and fake.total == 3
        assert all(r.in_flight for r in fake.requests)
        nursery.cancel_scope.cancel()
    with trio.fail_after(5):
        await fake.wait_idle()
    assert fake.in_flight == 0
    assert {r.outcome for r in fake.requests} == {Outcome.CLIENT_CLOSED}


async def test_wait_for_requests_returns_the_nth(fake: FakeProvider) -> None:
    fake.when(Reply.of("x"))
    async with make_client(fake) as client, trio.open_nursery() as nursery:

        async def two_calls() -> None:
            await trio.sleep(0.05)
            for text in ("one", "two"):
                await client.messages.create(model=MODEL, max_tokens=5, messages=user(text))

        nursery.start_soon(two_calls)
        with trio.fail_after(5):
            second = await fake.wait_for_requests(2)
    assert second.seq == 2 and second.body["messages"] == user("two")


@pytest.mark.parametrize("api", ["helper", "raw"])
async def test_cancel_mid_stream_seen_within_50ms(fake: FakeProvider, api: str) -> None:
    fake.enqueue(Endless(event_delay=0.01))
    cancelled_at = 0.0
    async with make_client(fake) as client:
        with trio.fail_after(5):
            with trio.CancelScope() as scope:
                if api == "helper":
                    async with client.messages.stream(
                        model=MODEL, max_tokens=5, messages=user("a")
                    ) as s:
                        async for text in s.text_stream:
                            assert text == "tick "
                            if not scope.cancel_called:
                                cancelled_at = time.monotonic()
                                scope.cancel()  # lands while the SDK waits for the next chunk
                else:
                    stream = await client.messages.create(
                        model=MODEL, max_tokens=5, messages=user("a"), stream=True
                    )
                    async with stream:
                        async for event in stream:
                            if event.type == "content_block_delta" and not scope.cancel_called:
                                cancelled_at = time.monotonic()
                                scope.cancel()
            assert scope.cancelled_caught
            record = fake.requests[-1]
            seen = await record.wait_disconnect()
    assert record.outcome is Outcome.CLIENT_CLOSED
    assert record.disconnected_at is not None
    assert 0 <= seen - cancelled_at < DISCONNECT_BOUND, seen - cancelled_at
    assert fake.in_flight == 0


async def test_move_on_after_while_waiting_for_headers(fake: FakeProvider) -> None:
    fake.enqueue(Hang())
    async with make_client(fake) as client:
        with trio.fail_after(5):
            with trio.move_on_after(0.1) as scope:
                await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
            gave_up = time.monotonic()
            assert scope.cancelled_caught
            seen = await fake.requests[-1].wait_disconnect()
    assert abs(seen - gave_up) < DISCONNECT_BOUND
    assert fake.requests[-1].status is None


async def test_cancel_during_stall_is_seen(fake: FakeProvider) -> None:
    fake.enqueue(Reply.of(Text(deltas=("x", "y")), fault=Stall(after=4)))
    async with make_client(fake) as client:
        with trio.fail_after(5):
            with trio.CancelScope() as scope:
                async with client.messages.stream(
                    model=MODEL, max_tokens=5, messages=user("a")
                ) as s:
                    async for _ in s.text_stream:
                        break_at = time.monotonic()
                        scope.cancel()
            seen = await fake.requests[-1].wait_disconnect()
    assert 0 <= seen - break_at < DISCONNECT_BOUND


async def test_many_cancelled_streams_leave_nothing_behind(fake: FakeProvider) -> None:
    fake.when(Endless(event_delay=0.005))
    async with make_client(fake) as client:
        with trio.fail_after(60):
            for _ in range(20):  # each closed by the client once its text has begun
                async with client.messages.stream(
                    model=MODEL, max_tokens=5, messages=user("a")
                ) as s:
                    async for _ in s.text_stream:
                        break
            await fake.wait_idle()
            await fake.wait_connections(0)
    assert fake.total == 20
    assert all(r.outcome is Outcome.CLIENT_CLOSED for r in fake.requests)
    assert all(r.events_sent >= 3 for r in fake.requests)


async def test_wait_disconnect_refuses_a_completed_request(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(Reply.of("done"))
    with trio.fail_after(5):
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
        with pytest.raises(AssertionError, match="completed"):
            await fake.requests[-1].wait_disconnect()


async def test_shutdown_ends_requests_in_flight() -> None:
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            async with open_fake_provider(api_key=API_KEY) as provider:
                provider.enqueue(Hang())
                client = make_client(provider)

                async def call() -> None:
                    async with client:
                        with pytest.raises(anthropic.APIConnectionError):
                            await client.messages.create(
                                model=MODEL, max_tokens=5, messages=user("a")
                            )

                nursery.start_soon(call)
                record = await provider.wait_for_requests(1)
                assert record.in_flight
            # the provider's scope is gone while the request was hanging
            assert record.outcome is Outcome.SERVER_SHUTDOWN
            assert provider.in_flight == 0


def _parsed_bodies(model: str) -> int:
    """Parsed request bodies for ``model`` alive in this process (dicts the collector sees)."""
    return sum(1 for o in gc.get_objects() if type(o) is dict and o.get("model") == model)


@pytest.mark.parametrize(("record_limit", "held"), [(0, 0), (None, 1)])
async def test_a_streamed_reply_holds_the_parsed_body_only_if_records_are_kept(
    record_limit: int | None, held: int
) -> None:
    model = "claude-body-marker"
    async with open_fake_provider(record_limit=record_limit, demo_event_delay=0.05) as fake:
        body = json.dumps(
            {"model": model, "max_tokens": 64, "stream": True, "messages": user("tell me")}
        ).encode()
        with trio.fail_after(10):
            stream = await trio.open_tcp_stream(fake.host, fake.port)
            async with stream:
                await stream.send_all(
                    b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n" % len(body) + body
                )
                assert b"200" in await stream.receive_some(65536)  # the reply is streaming
                assert fake.in_flight == 1
                assert _parsed_bodies(model) == held
