"""ModelClient through the real SDK against the fake provider on 127.0.0.1 (real clock)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anthropic
import attrs
import httpx2
import pytest
import trio

from hermes.fake import (
    Endless,
    ErrorEvent,
    ErrorReply,
    FailFirst,
    FakeProvider,
    Hang,
    Reply,
    Reset,
    Stall,
    Text,
    Thinking,
    ToolUse,
    Truncate,
    Usage,
)
from hermes.model import (
    AttemptFailed,
    FailureReason,
    Message,
    MessageComplete,
    ModelClient,
    ModelError,
    ModelEvent,
    ModelRequest,
    RetryPolicy,
    StalePolicy,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ToolUseComplete,
)
from hermes.model.convert import (
    WireCache,
    estimate_tokens,
    message_chars,
    request_body,
    request_params,
)

KEY = "test-key"
FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.01, deadline=10)
ONCE = RetryPolicy(max_attempts=1, deadline=10)


def client_for(fake: FakeProvider, **options: Any) -> ModelClient:
    options.setdefault("retry", FAST)
    return ModelClient(api_key=KEY, base_url=fake.base_url, trust_env=False, **options)


def ask(text: str = "hello", model: str = "claude-test", **options: Any) -> ModelRequest:
    return ModelRequest(model=model, messages=(Message.user(text),), **options)


async def test_text_reply_streams_events_and_returns_a_checked_response(
    fake: FakeProvider,
) -> None:
    fake.enqueue(
        Reply.of(Text("Hello there", chunk_size=4), usage=Usage(input_tokens=7, output_tokens=3))
    )
    events: list[ModelEvent] = []
    with trio.fail_after(10):
        async with client_for(fake) as client:
            response = await client.complete(ask(), events.append)
    assert response.message == Message("assistant", (TextBlock("Hello there"),))
    assert response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (7, 3)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hell", "o th", "ere"]
    assert isinstance(events[-1], MessageComplete) and events[-1].response == response
    assert fake.message_requests[0].headers["x-stainless-retry-count"] == "0"


async def test_thinking_and_fragmented_tool_use_become_typed_blocks(fake: FakeProvider) -> None:
    fake.enqueue(
        Reply.of(
            Thinking("plan it", signature="sig-1"),
            "Listing.",
            ToolUse("terminal", fragments=('{"comm', 'and": ', '"ls -la"}'), id="toolu_1"),
        )
    )
    events: list[ModelEvent] = []
    with trio.fail_after(10):
        async with client_for(fake) as client:
            response = await client.complete(ask(), events.append)
    assert response.message.content == (
        ThinkingBlock("plan it", "sig-1"),
        TextBlock("Listing."),
        ToolUseBlock("toolu_1", "terminal", {"command": "ls -la"}),
    )
    assert response.stop_reason == "tool_use"
    completes = [e for e in events if isinstance(e, ToolUseComplete)]
    assert [c.block.input for c in completes] == [{"command": "ls -la"}]


async def test_cancelling_the_caller_closes_the_stream_within_50_ms(fake: FakeProvider) -> None:
    fake.enqueue(Endless(event_delay=0.01))
    deltas: list[ModelEvent] = []
    with trio.fail_after(10):
        async with client_for(fake) as client:
            with trio.CancelScope() as scope:

                def on_event(event: ModelEvent) -> None:
                    deltas.append(event)
                    if len(deltas) == 5:
                        scope.cancel()

                await client.complete(ask(), on_event)
            cancelled_at = time.monotonic()
            record = fake.message_requests[0]
            disconnected_at = await record.wait_disconnect()
    assert scope.cancelled_caught
    assert disconnected_at - cancelled_at < 0.05
    assert fake.in_flight == 0


async def test_retries_honour_retry_after_ms_and_report_each_failed_attempt(
    fake: FakeProvider,
) -> None:
    fake.enqueue(FailFirst(2, ErrorReply(529, retry_after_ms=20), then=Reply.of("finally")))
    events: list[ModelEvent] = []
    with trio.fail_after(10):
        async with client_for(fake) as client:
            start = trio.current_time()
            response = await client.complete(ask(), events.append)
            elapsed = trio.current_time() - start
    assert response.message.text() == "finally"
    assert response.attempts == 3
    failed = [e for e in events if isinstance(e, AttemptFailed)]
    assert [(f.attempt, f.reason, f.delay) for f in failed] == [
        (1, "overloaded", 0.02),
        (2, "overloaded", 0.02),
    ]
    assert elapsed >= 0.04
    # Our retries, not the SDK's: every request went out as a first attempt.
    assert [r.retry_count for r in fake.message_requests] == [0, 0, 0]


async def test_a_retry_that_would_overrun_the_call_deadline_is_not_attempted(
    fake: FakeProvider,
) -> None:
    fake.enqueue(ErrorReply(429, retry_after=30))
    policy = RetryPolicy(max_attempts=5, deadline=2.0, retry_after_cap=60)
    with trio.fail_after(10):
        async with client_for(fake, retry=policy) as client:
            start = trio.current_time()
            with pytest.raises(ModelError) as caught:
                await client.complete(ask())
    assert trio.current_time() - start < 1.0  # it did not sleep 30 s, nor 2 s
    assert caught.value.reason is FailureReason.RATE_LIMIT
    assert not caught.value.hints.retryable
    assert "deadline" in caught.value.message
    assert len(fake.message_requests) == 1


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (ErrorEvent(after=4), FailureReason.OVERLOADED),
        (Truncate(after=4), FailureReason.STREAM_TRUNCATED),
        (Reset(after=4), FailureReason.TRANSPORT),
    ],
)
async def test_broken_streams_become_classified_errors_not_short_answers(
    fake: FakeProvider, fault: Any, reason: FailureReason
) -> None:
    fake.enqueue(Reply.of(Text("a long answer cut short", chunk_size=3), fault=fault))
    with trio.fail_after(10):
        async with client_for(fake, retry=ONCE) as client:
            with pytest.raises(ModelError) as caught:
                await client.complete(ask())
    assert caught.value.reason is reason
    assert caught.value.hints.retryable


async def test_a_broken_stream_is_retried_and_the_consumer_told_to_drop_it(
    fake: FakeProvider,
) -> None:
    fake.enqueue(Reply.of(Text("first try", chunk_size=2), fault=Truncate(after=5)))
    fake.enqueue(Reply.of("second try"))
    events: list[ModelEvent] = []
    with trio.fail_after(10):
        async with client_for(fake) as client:
            response = await client.complete(ask(), events.append)
    assert response.message.text() == "second try"
    kinds = [type(e).__name__ for e in events]
    failed_at = kinds.index("AttemptFailed")
    assert "TextDelta" in kinds[:failed_at]  # partial output before the failure ...
    assert kinds[-1] == "MessageComplete"  # ... then a clean second attempt


async def test_malformed_tool_arguments_are_retried_then_listed(fake: FakeProvider) -> None:
    bad = Reply.of(ToolUse("terminal", fragments=('{"command": "ls"',)))
    fake.enqueue(bad, bad, bad)
    events: list[ModelEvent] = []
    with trio.fail_after(10):
        async with client_for(fake, retry=FAST) as client:
            response = await client.complete(ask(), events.append)
    failed = [e for e in events if isinstance(e, AttemptFailed)]
    assert [e.reason for e in failed] == ["malformed_output"] * 2  # malformed_retries = 2
    assert response.attempts == 3 and len(fake.message_requests) == 3
    [use] = response.message.tool_uses()
    assert use.input == {}
    assert "not valid JSON" in response.malformed_inputs[use.id]
    assert "terminal" in response.malformed_inputs[use.id]


async def test_malformed_tool_arguments_recover_when_the_model_fixes_them(
    fake: FakeProvider,
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", [1, 2])), Reply.of(ToolUse("terminal", {"command": "ls"}))
    )
    with trio.fail_after(10):
        async with client_for(fake, retry=FAST) as client:
            response = await client.complete(ask())
    assert response.malformed_inputs == {}
    assert [u.input for u in response.message.tool_uses()] == [{"command": "ls"}]


async def test_malformed_retries_zero_accepts_the_first_reply(fake: FakeProvider) -> None:
    fake.enqueue(Reply.of(ToolUse("terminal", fragments=("nope",))))
    policy = RetryPolicy(max_attempts=4, base_delay=0.001, malformed_retries=0, deadline=10)
    with trio.fail_after(10):
        async with client_for(fake, retry=policy) as client:
            response = await client.complete(ask())
    assert list(response.malformed_inputs) == [response.message.tool_uses()[0].id]
    assert len(fake.message_requests) == 1


@pytest.mark.parametrize("stuck", [Stall(after=3), Hang()])
async def test_a_stale_stream_is_abandoned_and_the_connection_closed(
    fake: FakeProvider, stuck: Any
) -> None:
    fake.enqueue(Reply.of("hi", fault=stuck) if isinstance(stuck, Stall) else stuck)
    stale = StalePolicy(base=0.2)
    with trio.fail_after(10):
        async with client_for(fake, retry=ONCE, stale=stale) as client:
            start = trio.current_time()
            with pytest.raises(ModelError) as caught:
                await client.complete(ask())
            elapsed = trio.current_time() - start
            await fake.message_requests[0].wait_disconnect()
    assert caught.value.reason is FailureReason.TIMEOUT
    assert "no stream event for 0.2s" in caught.value.message
    assert 0.2 <= elapsed < 1.0


async def test_fallback_model_is_used_when_the_hints_allow(fake: FakeProvider) -> None:
    fake.when(ErrorReply(404, message="model: gone"), model="gone-model")
    fake.when(Reply.of("from the fallback"), model="spare-model")
    events: list[ModelEvent] = []
    with trio.fail_after(10):
        async with client_for(fake, fallback_models=("spare-model",)) as client:
            response = await client.complete(ask(model="gone-model"), events.append)
    assert response.message.text() == "from the fallback"
    assert [r.body["model"] for r in fake.message_requests] == ["gone-model", "spare-model"]
    switch = [e for e in events if isinstance(e, AttemptFailed)]
    assert [(s.reason, s.model) for s in switch] == [("model_not_found", "spare-model")]


async def test_a_bad_key_is_an_auth_error_without_retries(fake: FakeProvider) -> None:
    with trio.fail_after(10):
        async with ModelClient(
            api_key="wrong", base_url=fake.base_url, trust_env=False, retry=FAST
        ) as client:
            with pytest.raises(ModelError) as caught:
                await client.complete(ask())
    assert caught.value.reason is FailureReason.AUTH
    assert caught.value.status == 401
    assert len(fake.message_requests) == 1


async def test_refusal_is_classified_and_keeps_the_response(fake: FakeProvider) -> None:
    fake.enqueue(Reply.of("I can't help with that.", stop_reason="refusal"))
    with trio.fail_after(10):
        async with client_for(fake) as client:
            with pytest.raises(ModelError) as caught:
                await client.complete(ask())
    assert caught.value.reason is FailureReason.REFUSAL
    assert caught.value.partial.message.text() == "I can't help with that."


async def test_requests_carry_cache_breakpoints_and_usage_records_cache_reads(
    fake: FakeProvider,
) -> None:
    fake.enqueue(
        Reply.of(
            "ok",
            usage=Usage(
                input_tokens=5,
                cache_read_input_tokens=900,
                cache_creation_input_tokens=40,
                output_tokens=2,
            ),
        )
    )
    request = ModelRequest(
        model="claude-test",
        system=(TextBlock("stable tier", cache=True), TextBlock("today is Sunday")),
        messages=(
            Message.user("one"),
            Message("assistant", (TextBlock("two"),)),
            Message.user("three"),
        ),
    )
    with trio.fail_after(10):
        async with client_for(fake) as client:
            response = await client.complete(request)
    body = fake.message_requests[0].body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["system"][1]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert response.usage.cache_read_input_tokens == 900
    assert response.usage.cache_creation_input_tokens == 40
    assert response.usage.prompt_tokens == 945


LEAK_CHECK = """
import trio
from hermes.fake import Endless, Reply, open_fake_provider
from hermes.model import Message, ModelClient, ModelRequest

async def main():
    async with open_fake_provider(api_key="k") as fake:
        async with ModelClient(api_key="k", base_url=fake.base_url, trust_env=False) as client:
            request = ModelRequest(model="m", messages=(Message.user("hi"),))
            fake.enqueue(Reply.of("one"))
            await client.complete(request)
            fake.enqueue(Endless(event_delay=0.01))
            with trio.move_on_after(0.1):
                await client.complete(request)
    print("done")

trio.run(main)
"""


def test_no_leaked_sockets_or_resource_warnings(tmp_path: Path) -> None:
    script = tmp_path / "leak_check.py"
    script.write_text(LEAK_CHECK)
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error::ResourceWarning", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "done"
    assert "ResourceWarning" not in out.stderr
    assert "unclosed" not in out.stderr


def _rich_request(*history: Message) -> ModelRequest:
    return ModelRequest(
        model="claude-test",
        system=(TextBlock("stable tier", cache=True), TextBlock("today is Sunday")),
        messages=(
            Message.user('héllo ✓ "quoted"'),
            Message(
                "assistant",
                (TextBlock("on it"), ToolUseBlock("toolu_1", "terminal", {"command": "ls -l"})),
            ),
            Message("user", (ToolResultBlock("toolu_1", "a\nb", is_error=True),)),
            *history,
        ),
        tools=(ToolSpec("terminal", "run a command", {"type": "object", "required": ["x"]}),),
        thinking_budget=1024,
        stop_sequences=("STOP",),
        tool_choice="auto",
        max_tokens=2048,
    )


@pytest.mark.parametrize("temperature", [None, 0.0, 0.7])
async def test_the_request_body_is_byte_for_byte_what_the_sdk_sends_for_the_params(
    fake: FakeProvider, temperature: float | None
) -> None:
    request = attrs.evolve(_rich_request(Message.user("and now?")), temperature=temperature)
    fake.enqueue(Reply.of("one"), Reply.of("two"))
    with trio.fail_after(10):
        async with client_for(fake) as client:
            await client.complete(request)
        sdk = anthropic.AsyncAnthropic(
            api_key=KEY, base_url=fake.base_url, max_retries=0, http_client=httpx2.AsyncClient()
        )
        async with sdk:
            stream = await sdk.messages.create(
                **request_params(request, "claude-test"), stream=True
            )
            async with stream:
                async for _ in stream:
                    pass
    ours, theirs = fake.message_requests
    assert ours.raw_body == theirs.raw_body
    assert ours.headers["content-type"] == theirs.headers["content-type"] == "application/json"
    assert ours.body["messages"][-1]["content"][0]["cache_control"] == {"type": "ephemeral"}
    if temperature is None:
        assert "temperature" not in ours.body  # the model's own default: nothing sent
    else:
        assert ours.body["temperature"] == temperature


def test_a_temperature_outside_0_to_1_is_refused_with_its_value() -> None:
    for bad in (-0.1, 1.5, True, "0"):
        with pytest.raises(ValueError, match="temperature: expected a number from 0 to 1"):
            ModelRequest(model="m", messages=(Message.user("x"),), temperature=bad)  # type: ignore[arg-type]


def test_each_message_is_encoded_once_and_forgotten_with_it() -> None:
    cache = WireCache()
    first = _rich_request(Message.user("one"))
    body1 = request_body(first, "m", cache)
    # Next request: the same message objects plus one more; the old last one loses its mark.
    second = attrs.evolve(
        first, messages=(*first.messages, Message("assistant", (TextBlock("two"),)))
    )
    encoded = [cache.message(m) for m in first.messages]
    assert len(cache) == 4
    assert all(cache.message(m) is e for m, e in zip(first.messages, encoded, strict=True))
    body2 = request_body(second, "m", cache)
    one = {"role": "user", "content": [{"type": "text", "text": "one"}]}
    assert json.loads(body2)["messages"][:4] == [*json.loads(body1)["messages"][:3], one]
    assert json.loads(body1)["messages"][3]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert len(cache) == 4  # the newest message (with the breakpoint) is not cached
    del first, second, encoded
    assert len(cache) == 0  # freed by reference counting: no collection needed


def test_system_and_tools_are_encoded_once_per_tuple() -> None:
    cache = WireCache()
    request = _rich_request(Message.user("one"))
    body = request_body(request, "m", cache)
    system = cache.encoded(request.system, lambda _: pytest.fail("encoded again"))
    tools = cache.encoded(request.tools, lambda _: pytest.fail("encoded again"))
    assert json.loads(system) == json.loads(body)["system"]
    assert json.loads(tools) == json.loads(body)["tools"]
    # Another tuple with equal content is encoded anew (identity, not equality).
    assert cache.encoded((*request.tools,), lambda t: [t[0].name]) == b'["terminal"]'


def test_the_prompt_estimate_counts_a_cached_message_once() -> None:
    cache = WireCache()
    request = _rich_request(Message.user("one"))
    assert estimate_tokens(request, cache) == estimate_tokens(request) > 0  # nothing cached
    request_body(request, "m", cache)
    held_ones = [m for m in request.messages if id(m) in cache._entries]
    assert held_ones and all(cache._entries[id(m)].chars == -1 for m in held_ones)
    assert estimate_tokens(request, cache) == estimate_tokens(request)
    assert all(cache._entries[id(m)].chars == message_chars(m) for m in held_ones)
    # A held message's count is kept: counted again, it would not be this made-up number.
    held = request.messages[0]
    cache._entries[id(held)].chars = 10_000
    assert cache.chars(held) == 10_000
    assert estimate_tokens(request, cache) > estimate_tokens(request)
