"""Prompt-cache usage: markers write a prefix, later requests with the same prefix read it."""

from __future__ import annotations

from typing import Any

import anthropic
import trio

from hermes.fake import FakeProvider, Reply
from hermes.fake.caching import PromptCache

from .conftest import MODEL

SYSTEM = [{"type": "text", "text": "You are a careful agent. " * 40}]
CACHED_SYSTEM = [{**SYSTEM[0], "cache_control": {"type": "ephemeral"}}]


def turn(text: str, *, mark: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if mark:
        block["cache_control"] = {"type": "ephemeral"}
    return {"role": "user", "content": [block]}


async def usage_of(client: anthropic.AsyncAnthropic, **kw: Any) -> anthropic.types.Usage:
    with trio.fail_after(5):
        async with client.messages.stream(model=MODEL, max_tokens=50, **kw) as s:
            return (await s.get_final_message()).usage


async def test_cache_write_then_read(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.when(Reply.of("ok"))
    first_turn = [turn("first question " * 30, mark=True)]
    one = await usage_of(client, system=CACHED_SYSTEM, messages=first_turn)
    assert one.cache_read_input_tokens == 0
    assert one.cache_creation_input_tokens > 0

    second_turn = [
        turn("first question " * 30, mark=False),  # the marker moved to the end
        {"role": "assistant", "content": "ok"},
        turn("second question", mark=True),
    ]
    two = await usage_of(client, system=CACHED_SYSTEM, messages=second_turn)
    assert two.cache_read_input_tokens == one.cache_creation_input_tokens
    assert two.cache_creation_input_tokens > 0

    again = await usage_of(client, system=CACHED_SYSTEM, messages=second_turn)
    assert again.cache_creation_input_tokens == 0
    assert again.cache_read_input_tokens == (
        two.cache_read_input_tokens + two.cache_creation_input_tokens
    )
    assert again.input_tokens < one.input_tokens + one.cache_creation_input_tokens


async def test_changed_prefix_misses(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.when(Reply.of("ok"))
    await usage_of(client, system=CACHED_SYSTEM, messages=[turn("q", mark=True)])
    other = [{**CACHED_SYSTEM[0], "text": "A different system prompt. " * 40}]
    usage = await usage_of(client, system=other, messages=[turn("q", mark=True)])
    assert usage.cache_read_input_tokens == 0 and usage.cache_creation_input_tokens > 0


async def test_no_markers_no_cache(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.when(Reply.of("ok"))
    for _ in range(2):
        usage = await usage_of(client, system=SYSTEM, messages=[turn("q", mark=False)])
        assert usage.cache_read_input_tokens == 0 and usage.cache_creation_input_tokens == 0
        assert usage.input_tokens > 100


def test_minimum_and_capacity() -> None:
    body = {"model": "m", "system": CACHED_SYSTEM, "messages": [turn("q", mark=False)]}
    raw = b'"cache_control"' + b" " * 4000
    small = PromptCache(min_tokens=10_000)
    assert small.usage(body, raw)[1:] == (0, 0)
    tiny = PromptCache(capacity=1)
    first = tiny.usage(body, raw)
    assert first[1] > 0 and tiny.usage(body, raw)[2] == first[1]
