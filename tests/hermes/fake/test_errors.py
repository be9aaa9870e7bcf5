"""Errors and faults through the real SDK: statuses, retries, in-stream errors, transport faults."""

from __future__ import annotations

import time

import anthropic
import httpx2
import pytest
import trio

from hermes.fake import (
    ErrorEvent,
    ErrorReply,
    FailFirst,
    FakeProvider,
    Hang,
    Outcome,
    Reply,
    Reset,
    Stall,
    Text,
    Truncate,
)

from .conftest import MODEL, make_client, sdk_stream_generators_collected, user

STATUS_CLASSES: list[tuple[int, type[anthropic.APIStatusError], str]] = [
    (400, anthropic.BadRequestError, "invalid_request_error"),
    (401, anthropic.AuthenticationError, "authentication_error"),
    (402, anthropic.PaymentRequiredError, "billing_error"),
    (403, anthropic.PermissionDeniedError, "permission_error"),
    (404, anthropic.NotFoundError, "not_found_error"),
    (408, anthropic.RequestTimeoutError, "timeout_error"),
    (409, anthropic.ConflictError, "invalid_request_error"),
    (413, anthropic.ContentTooLargeError, "request_too_large"),
    (422, anthropic.UnprocessableEntityError, "invalid_request_error"),
    (429, anthropic.RateLimitError, "rate_limit_error"),
    (500, anthropic.InternalServerError, "api_error"),
    (503, anthropic.ServiceUnavailableError, "api_error"),
    (504, anthropic.GatewayTimeoutError, "timeout_error"),
    (529, anthropic.OverloadedError, "overloaded_error"),
]


@pytest.mark.parametrize(("status", "cls", "error_type"), STATUS_CLASSES)
async def test_status_maps_to_sdk_class(
    fake: FakeProvider,
    client: anthropic.AsyncAnthropic,
    status: int,
    cls: type[anthropic.APIStatusError],
    error_type: str,
) -> None:
    fake.enqueue(ErrorReply(status, retry_after=7, message=f"scripted {status}"))
    with trio.fail_after(5), pytest.raises(cls) as info:
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    err = info.value
    assert type(err) is cls
    assert err.status_code == status
    assert err.type == error_type
    assert err.api_message == f"scripted {status}"
    assert err.request_id == fake.requests[-1].request_id
    assert err.response.headers["retry-after"] == "7"
    assert err.body == {
        "type": "error",
        "error": {"type": error_type, "message": f"scripted {status}"},
        "request_id": fake.requests[-1].request_id,
    }


async def test_streaming_request_gets_the_error_status(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(ErrorReply(529))
    with trio.fail_after(5), pytest.raises(anthropic.OverloadedError) as info:
        async with client.messages.stream(model=MODEL, max_tokens=5, messages=user("a")) as s:
            await s.get_final_message()
    assert info.value.api_message == "Overloaded"


async def test_retry_headers_and_error_code(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(
        ErrorReply(
            429,
            retry_after_ms=12.5,
            should_retry=False,
            error_code="enforced_spend_limit_reached",
        )
    )
    with trio.fail_after(5), pytest.raises(anthropic.RateLimitError) as info:
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    headers = info.value.response.headers
    assert headers["retry-after-ms"] == "12.5"
    assert headers["x-should-retry"] == "false"
    assert "retry-after" not in headers
    assert info.value.error_code == "enforced_spend_limit_reached"
    assert isinstance(info.value, anthropic.EnforcedSpendLimitReachedError)


async def test_429_always_carries_retry_after(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(ErrorReply(429))
    with trio.fail_after(5), pytest.raises(anthropic.RateLimitError) as info:
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert info.value.response.headers["retry-after"] == "0"


async def test_fail_first_k_with_sdk_retries(fake: FakeProvider) -> None:
    fake.enqueue(FailFirst(2, ErrorReply(529, retry_after_ms=2), then=Reply.of("finally")))
    async with make_client(fake, max_retries=2) as client:
        with trio.fail_after(5):
            message = await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert message.content[0].type == "text" and message.content[0].text == "finally"
    assert [r.status for r in fake.requests] == [529, 529, 200]
    assert [r.retry_count for r in fake.requests] == [0, 1, 2]
    assert fake.script.pending == 0


async def test_fail_first_k_exhausts_sdk_retries(fake: FakeProvider) -> None:
    fake.enqueue(FailFirst(3, ErrorReply(500, retry_after_ms=1), then=Reply.of("late")))
    async with make_client(fake, max_retries=2) as client:
        with trio.fail_after(5), pytest.raises(anthropic.InternalServerError):
            await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
        assert fake.total == 3
        with trio.fail_after(5):
            message = await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert fake.total == 4  # three failures were spent on the first call
    assert message.content[0].type == "text" and message.content[0].text == "late"


async def test_fail_first_per_call_uses_retry_count(fake: FakeProvider) -> None:
    """``per_call``: each logical call fails its first attempt (x-stainless-retry-count)."""
    fake.when(FailFirst(1, ErrorReply(529, retry_after_ms=1), then=Reply.of("ok"), per_call=True))
    async with make_client(fake, max_retries=1) as client:
        with trio.fail_after(5):
            for _ in range(2):
                message = await client.messages.create(
                    model=MODEL, max_tokens=5, messages=user("a")
                )
                assert message.content[0].type == "text"
    assert [(r.retry_count, r.status) for r in fake.requests] == [
        (0, 529),
        (1, 200),
        (0, 529),
        (1, 200),
    ]


async def test_should_retry_false_stops_sdk_retries(fake: FakeProvider) -> None:
    fake.enqueue(FailFirst(2, ErrorReply(529, retry_after_ms=1, should_retry=False)))
    async with make_client(fake, max_retries=2) as client:
        with trio.fail_after(5), pytest.raises(anthropic.OverloadedError):
            await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert fake.total == 1


async def test_should_retry_true_retries_a_400(fake: FakeProvider) -> None:
    fake.enqueue(FailFirst(1, ErrorReply(400, retry_after_ms=1, should_retry=True), Reply.of("y")))
    async with make_client(fake, max_retries=1) as client:
        with trio.fail_after(5):
            message = await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert message.content[0].type == "text" and message.content[0].text == "y"
    assert [r.status for r in fake.requests] == [400, 200]


async def test_fail_first_without_then_falls_through(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(FailFirst(1, ErrorReply(503)), Reply.of("next in queue"))
    with trio.fail_after(5):
        with pytest.raises(anthropic.ServiceUnavailableError):
            await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
        message = await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert message.content[0].type == "text" and message.content[0].text == "next in queue"


@pytest.mark.parametrize("raw", [False, True])
async def test_error_event_mid_stream(
    fake: FakeProvider, client: anthropic.AsyncAnthropic, raw: bool
) -> None:
    fake.enqueue(Reply.of(Text(deltas=("a", "b", "c", "d")), fault=ErrorEvent(after=5)))
    texts: list[str] = []
    with trio.fail_after(60):  # full gc passes below: seconds on a big, busy heap
        async with sdk_stream_generators_collected():
            with pytest.raises(anthropic.APIStatusError) as info:
                if raw:
                    stream = await client.messages.create(
                        model=MODEL, max_tokens=5, messages=user("a"), stream=True
                    )
                    async with stream:
                        async for event in stream:
                            if event.type == "content_block_delta":
                                assert event.delta.type == "text_delta"
                                texts.append(event.delta.text)
                else:
                    async with client.messages.stream(
                        model=MODEL, max_tokens=5, messages=user("a")
                    ) as s:
                        async for text in s.text_stream:
                            texts.append(text)
            err = info.value
            facts = (type(err), err.status_code, err.type, err.api_message)
            del err, info
    assert facts == (anthropic.APIStatusError, 200, "overloaded_error", "Overloaded")
    assert texts == ["a", "b"]  # message_start, ping, block start, 2 deltas, then the error
    assert fake.requests[-1].outcome is Outcome.COMPLETED
    assert fake.requests[-1].events_sent == 6


async def test_error_event_type_is_scriptable(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(Reply.of("x", fault=ErrorEvent(after=1, error_type="api_error", message="boom")))
    with trio.fail_after(60):  # full gc passes below: seconds on a big, busy heap
        async with sdk_stream_generators_collected():
            with pytest.raises(anthropic.APIStatusError) as info:
                async with client.messages.stream(
                    model=MODEL, max_tokens=5, messages=user("a")
                ) as s:
                    await s.get_final_message()
            facts = (info.value.type, info.value.api_message)
            del info
    assert facts == ("api_error", "boom")


@pytest.mark.parametrize("raw", [False, True])
async def test_truncation_before_message_stop(
    fake: FakeProvider, client: anthropic.AsyncAnthropic, raw: bool
) -> None:
    fake.enqueue(Reply.of(Text(deltas=("par", "tial", "never")), fault=Truncate(after=5)))
    types: list[str] = []
    with trio.fail_after(5):
        if raw:
            stream = await client.messages.create(
                model=MODEL, max_tokens=5, messages=user("a"), stream=True
            )
            async with stream:
                async for event in stream:
                    types.append(event.type)
        else:
            async with client.messages.stream(model=MODEL, max_tokens=5, messages=user("a")) as s:
                async for event in s:
                    types.append(event.type)
                final = await s.get_final_message()
            assert final.stop_reason is None
            assert final.content[0].type == "text" and final.content[0].text == "partial"
    assert "message_stop" not in types and "message_delta" not in types
    assert fake.requests[-1].outcome is Outcome.TRUNCATED_BY_SERVER


async def test_truncated_json_body(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.enqueue(Reply.of("a long enough answer", fault=Truncate()))
    with trio.fail_after(5), pytest.raises(anthropic.APIConnectionError):
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert fake.requests[-1].outcome is Outcome.TRUNCATED_BY_SERVER


@pytest.mark.parametrize("raw", [False, True])
async def test_reset_mid_body(
    fake: FakeProvider, client: anthropic.AsyncAnthropic, raw: bool
) -> None:
    fake.enqueue(Reply.of(Text(deltas=("a", "b", "c")), fault=Reset(after=4), event_delay=0.005))
    texts: list[str] = []
    # The SDK raises the transport error itself (anthropic < 2.17) or wraps it in
    # APIConnectionError (2.17 on); either way the cause is the reset connection.
    with (
        trio.fail_after(5),
        pytest.raises((httpx2.TransportError, anthropic.APIConnectionError)) as info,
    ):
        if raw:
            stream = await client.messages.create(
                model=MODEL, max_tokens=5, messages=user("a"), stream=True
            )
            async with stream:
                async for event in stream:
                    if event.type == "content_block_delta" and event.delta.type == "text_delta":
                        texts.append(event.delta.text)
        else:
            async with client.messages.stream(model=MODEL, max_tokens=5, messages=user("a")) as s:
                async for text in s.text_stream:
                    texts.append(text)
    cause = info.value if isinstance(info.value, httpx2.TransportError) else info.value.__cause__
    assert isinstance(cause, httpx2.RemoteProtocolError | httpx2.ReadError)
    assert texts == ["a"]
    assert fake.requests[-1].outcome is Outcome.RESET_BY_SERVER
    with trio.fail_after(5):
        await fake.wait_connections(0)


async def test_reset_non_streaming(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.enqueue(Reply.of("some answer text", fault=Reset()))
    with trio.fail_after(5), pytest.raises(anthropic.APIConnectionError) as info:
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert isinstance(info.value.__cause__, httpx2.TransportError)


async def test_hang_never_sends_headers(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(Hang())
    start = time.monotonic()
    with trio.fail_after(5), pytest.raises(anthropic.APITimeoutError):
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"), timeout=0.2)
    assert 0.18 <= time.monotonic() - start < 2
    record = fake.requests[-1]
    with trio.fail_after(1):
        assert await record.wait_ended() is Outcome.CLIENT_CLOSED
    assert record.status is None


async def test_hang_then_close(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.enqueue(Hang(close_after=0.05))
    with trio.fail_after(5), pytest.raises(anthropic.APIConnectionError) as info:
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert isinstance(info.value.__cause__, httpx2.RemoteProtocolError)
    assert fake.requests[-1].outcome is Outcome.CLOSED_BY_SERVER


async def test_stall_after_some_events(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(Reply.of(Text(deltas=("first", "never")), fault=Stall(after=4)))
    texts: list[str] = []
    with trio.fail_after(5):
        with trio.move_on_after(0.3) as scope:
            async with client.messages.stream(model=MODEL, max_tokens=5, messages=user("a")) as s:
                async for text in s.text_stream:
                    texts.append(text)
        assert scope.cancelled_caught
        assert await fake.requests[-1].wait_ended() is Outcome.CLIENT_CLOSED
    assert texts == ["first"]


async def test_timeout_on_slow_stream(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    """A per-call read timeout shorter than the event delay surfaces as APITimeoutError."""
    fake.enqueue(Reply.of(Text(deltas=("a", "b")), event_delay=0.5))
    with trio.fail_after(5), pytest.raises((anthropic.APITimeoutError, httpx2.ReadTimeout)):
        async with client.messages.stream(
            model=MODEL, max_tokens=5, messages=user("a"), timeout=0.1
        ) as s:
            await s.get_final_message()


async def test_unscripted_request_is_a_500(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    with trio.fail_after(5), pytest.raises(anthropic.InternalServerError) as info:
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert "nothing scripted" in str(info.value.api_message)
    assert fake.requests[-1].responder == "unscripted error"


async def test_failing_responder_is_reported(fake: FakeProvider) -> None:
    def boom(req: object) -> Reply:
        raise RuntimeError("responder bug")

    fake.enqueue(boom)
    async with make_client(fake) as client:
        with trio.fail_after(5), pytest.raises(anthropic.InternalServerError) as info:
            await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert "responder bug" in str(info.value.api_message)
    assert fake.requests[-1].outcome is Outcome.SERVER_ERROR
    assert [str(e) for e in fake.errors] == ["responder bug"]
    fake.errors.clear()
