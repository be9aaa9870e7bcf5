"""Authentication, routing, request validation and the HTTP/1.1 layer itself."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import pytest
import trio

from hermes.fake import FakeProvider, Reply, open_fake_provider
from hermes.fake.http11 import ProtocolError, parse_head

from .conftest import API_KEY, MODEL, make_client, user

BODY = {"model": MODEL, "max_tokens": 5, "messages": user("hi")}


async def post(
    fake: FakeProvider,
    path: str = "/v1/messages",
    *,
    content: bytes | None = None,
    headers: dict[str, str] | None = None,
    method: str = "POST",
) -> httpx2.Response:
    """One request with a plain httpx2 client (no SDK)."""
    hdrs = {"x-api-key": API_KEY, "content-type": "application/json"}
    hdrs.update(headers or {})
    with trio.fail_after(5):
        async with httpx2.AsyncClient(trust_env=False) as http:
            return await http.request(
                method,
                f"{fake.base_url}{path}",
                content=json.dumps(BODY).encode() if content is None else content,
                headers=hdrs,
            )


async def test_bearer_and_x_api_key_both_accepted(fake: FakeProvider) -> None:
    fake.when(Reply.of("ok"))
    async with make_client(fake) as bearer:
        with trio.fail_after(5):
            await bearer.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert fake.requests[-1].headers["authorization"] == f"Bearer {API_KEY}"
    response = await post(fake)
    assert response.status_code == 200
    assert "authorization" not in fake.requests[-1].headers


async def test_bad_key_is_401(fake: FakeProvider) -> None:
    fake.when(Reply.of("never"))
    async with make_client(fake, api_key="wrong-key") as client:
        with trio.fail_after(5), pytest.raises(anthropic.AuthenticationError) as info:
            await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert info.value.type == "authentication_error"
    assert info.value.request_id == fake.requests[-1].request_id
    assert fake.requests[-1].responder == "auth"
    response = await post(fake, headers={"x-api-key": "wrong-key"})
    assert response.status_code == 401


async def test_missing_key_is_401(fake: FakeProvider) -> None:
    response = await post(fake, headers={"x-api-key": ""})
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"
    assert response.json()["request_id"] == response.headers["request-id"]


async def test_no_api_key_configured_accepts_anything() -> None:
    async with open_fake_provider(demo=False) as fake:
        fake.when(Reply.of("open"))
        response = await post(fake, headers={"x-api-key": ""})
        assert response.status_code == 200
        async with make_client(fake, api_key="anything") as client:
            with trio.fail_after(5):
                message = await client.messages.create(
                    model=MODEL, max_tokens=5, messages=user("a")
                )
    assert message.content[0].type == "text" and message.content[0].text == "open"


async def test_unknown_path_is_404(fake: FakeProvider) -> None:
    response = await post(fake, "/v1/complete")
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found_error"
    async with make_client(fake) as client:
        with trio.fail_after(5), pytest.raises(anthropic.NotFoundError):
            await client.get("/v1/nothing-here", cast_to=object)


async def test_wrong_method_is_405(fake: FakeProvider) -> None:
    response = await post(fake, method="GET", content=b"")
    assert response.status_code == 405
    assert response.json()["error"]["type"] == "invalid_request_error"


async def test_malformed_json_is_400_naming_the_problem(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    response = await post(fake, content=b'{"model": "m", "max_tokens": 5,')
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith("Invalid JSON in request body:")
    assert "line 1" in error["message"]
    assert fake.requests[-1].body is None
    assert fake.requests[-1].raw_body.startswith(b'{"model"')


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([1, 2], "Request body must be a JSON object"),
        ({"max_tokens": 5, "messages": user("a")}, "model: Field required"),
        ({"model": MODEL, "messages": user("a")}, "max_tokens: Field required"),
        ({"model": MODEL, "max_tokens": 5}, "messages: Field required"),
        ({"model": MODEL, "max_tokens": 5, "messages": []}, "messages: at least one message"),
        (
            {"model": MODEL, "max_tokens": 5, "messages": [{"role": "bot", "content": "x"}]},
            "messages.0.role: Input should be 'user' or 'assistant'",
        ),
        ({"model": MODEL, "max_tokens": "5", "messages": user("a")}, "max_tokens: Input should"),
    ],
)
async def test_invalid_body_is_400(fake: FakeProvider, body: Any, message: str) -> None:
    response = await post(fake, content=json.dumps(body).encode())
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(message)


async def test_invalid_body_through_sdk(client: anthropic.AsyncAnthropic) -> None:
    with trio.fail_after(5), pytest.raises(anthropic.BadRequestError) as info:
        await client.messages.create(model=MODEL, max_tokens=5, messages=[])
    assert "at least one message" in str(info.value.api_message)


async def test_unknown_fields_are_ignored(fake: FakeProvider) -> None:
    fake.when(Reply.of("ok"))
    body = {**BODY, "future_field": {"x": 1}, "temperature": 0.2}
    response = await post(fake, content=json.dumps(body).encode())
    assert response.status_code == 200


async def test_request_too_large_is_413() -> None:
    async with open_fake_provider(api_key=API_KEY, max_body_bytes=1000) as fake:
        fake.when(Reply.of("small"))
        async with make_client(fake) as client:
            with trio.fail_after(5), pytest.raises(anthropic.ContentTooLargeError) as info:
                await client.messages.create(model=MODEL, max_tokens=5, messages=user("x" * 2000))
            assert info.value.type == "request_too_large"
            with trio.fail_after(5):
                ok = await client.messages.create(model=MODEL, max_tokens=5, messages=user("x"))
    assert ok.content[0].type == "text"


async def test_known_models() -> None:
    async with open_fake_provider(api_key=API_KEY, known_models=["claude-a", "claude-b"]) as fake:
        fake.when(Reply.of("ok"))
        async with make_client(fake) as client:
            with trio.fail_after(5):
                with pytest.raises(anthropic.NotFoundError) as info:
                    await client.messages.create(model="claude-x", max_tokens=5, messages=user("a"))
                assert info.value.api_message == "model: claude-x"
                await client.messages.create(model="claude-a", max_tokens=5, messages=user("a"))
                page = await client.models.list()
                one = await client.models.retrieve("claude-b")
                with pytest.raises(anthropic.NotFoundError):
                    await client.models.retrieve("claude-x")
    assert [m.id for m in page.data] == ["claude-a", "claude-b"]
    assert one.id == "claude-b"


async def test_count_tokens(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    with trio.fail_after(5):
        small = await client.messages.count_tokens(model=MODEL, messages=user("hi"))
        large = await client.messages.count_tokens(model=MODEL, messages=user("hi " * 400))
    assert 0 < small.input_tokens < large.input_tokens
    assert fake.requests[-1].path == "/v1/messages/count_tokens"


async def test_keep_alive_reuses_one_connection(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.when(Reply.of("again"))
    with trio.fail_after(5):
        for _ in range(5):
            await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
        async with client.messages.stream(model=MODEL, max_tokens=5, messages=user("a")) as s:
            await s.get_final_message()
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert fake.total == 7
    assert fake.connections_total == 1


async def raw_exchange(fake: FakeProvider, data: bytes, *, until_close: bool = True) -> bytes:
    """Send raw bytes; read until the server closes (or a full response, if not)."""
    with trio.fail_after(5):
        stream = await trio.open_tcp_stream("127.0.0.1", fake.port)
        async with stream:
            await stream.send_all(data)
            received = b""
            while True:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    return received
                received += chunk
                if not until_close and received.endswith(b"}"):
                    return received


def raw_request(body: bytes, *, extra: str = "", version: str = "HTTP/1.1") -> bytes:
    head = (
        f"POST /v1/messages {version}\r\nHost: x\r\nx-api-key: {API_KEY}\r\n"
        f"content-length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body


async def test_pipelined_requests_and_connection_close(fake: FakeProvider) -> None:
    fake.when(Reply.of("p"))
    body = json.dumps(BODY).encode()
    data = raw_request(body) + raw_request(body, extra="Connection: close\r\n")
    received = await raw_exchange(fake, data)
    assert received.count(b"HTTP/1.1 200 OK") == 2
    assert b"connection: close" in received.lower()
    assert fake.total == 2


async def test_chunked_request_body_and_expect_continue(fake: FakeProvider) -> None:
    fake.when(Reply.of("chunked in"))
    body = json.dumps(BODY).encode()
    chunked = (
        b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:]))
        + b"0\r\n\r\n"
    )
    head = (
        f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: {API_KEY}\r\n"
        "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    ).encode()
    received = await raw_exchange(fake, head + chunked)
    assert received.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
    assert b"chunked in" in received
    assert fake.requests[-1].body == BODY


async def test_http10_stream_is_close_delimited(fake: FakeProvider) -> None:
    fake.when(Reply.of("old client"))
    body = json.dumps({**BODY, "stream": True}).encode()
    received = await raw_exchange(fake, raw_request(body, version="HTTP/1.0"))
    head, _, payload = received.partition(b"\r\n\r\n")
    assert b"transfer-encoding" not in head.lower()
    assert payload.startswith(b"event: message_start\n")
    assert payload.endswith(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"NONSENSE\r\n\r\n", 400),
        (b"POST /v1/messages HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        (b"POST /v1/messages HTTP/1.1\r\nbad header line\r\n\r\n", 400),
        (b"POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
    ],
)
async def test_malformed_http_gets_an_error_and_close(
    fake: FakeProvider, data: bytes, status: int
) -> None:
    received = await raw_exchange(fake, data)
    assert received.startswith(b"HTTP/1.1 %d " % status)
    assert b"connection: close" in received
    assert fake.total == 0


def test_parse_head_rules() -> None:
    head = parse_head(b"\r\nGET /v1/models?limit=2 HTTP/1.1\r\nHost: x\r\nX-Thing:  v  ")
    assert head.method == "GET" and head.path == "/v1/models" and head.target.endswith("=2")
    assert head.headers == [(b"host", b"x"), (b"x-thing", b"v")]
    assert head.keep_alive and not head.http10
    assert not parse_head(b"GET / HTTP/1.0").keep_alive
    assert parse_head(b"GET / HTTP/1.0\r\nConnection: keep-alive").keep_alive
    for bad in (
        b"GET / HTTP/1.1\r\ncontent-length: x",
        b"GET / HTTP/1.1\r\ncontent-length: 1\r\ncontent-length: 2",
        b"GET / HTTP/1.1\r\ncontent-length: 1\r\ntransfer-encoding: chunked",
        b"GET / HTTP/1.1\r\n folded: x",
    ):
        with pytest.raises(ProtocolError):
            parse_head(bad)
