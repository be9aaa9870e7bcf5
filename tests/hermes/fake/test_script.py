"""Which scripted response answers which request: rules, queue, responders, fallback."""

from __future__ import annotations

import re
from typing import Any

import anthropic
import trio

from hermes.fake import (
    ErrorReply,
    FakeProvider,
    Match,
    MessagesRequest,
    Reply,
    ToolUse,
)

from .conftest import MODEL, user


async def ask(client: anthropic.AsyncAnthropic, messages: list[dict[str, Any]], **kw: Any) -> str:
    """Send a streamed request; return the text of the reply."""
    options: dict[str, Any] = {"model": MODEL, "max_tokens": 50, **kw}
    with trio.fail_after(5):
        async with client.messages.stream(messages=messages, **options) as s:
            final = await s.get_final_message()
    return "".join(b.text for b in final.content if b.type == "text")


async def test_queue_is_fifo(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.enqueue(Reply.of("one"), Reply.of("two"))
    assert fake.script.pending == 2
    assert await ask(client, user("a")) == "one"
    assert await ask(client, user("a")) == "two"
    assert fake.script.pending == 0


async def test_match_last_user_text(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.when(Reply.of("weather reply"), last_user_text="weather")
    fake.when(Reply.of("number reply"), last_user_text=re.compile(r"\d{3}"))
    fake.enqueue(Reply.of("queued"))
    assert await ask(client, user("what's the weather like?")) == "weather reply"
    assert await ask(client, user("call 555 now")) == "number reply"
    assert await ask(client, user("something else")) == "queued"
    # text blocks count, and only the final user message is looked at
    blocks = [{"role": "user", "content": [{"type": "text", "text": "weather please"}]}]
    assert await ask(client, blocks) == "weather reply"


async def test_match_tool_result_ids(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    fake.when(Reply.of(ToolUse("terminal", {"command": "ls"}, id="toolu_1")), last_user_text="list")
    fake.when(Reply.of("saw the listing"), tool_result_ids=["toolu_1"])
    with trio.fail_after(5):
        first = await client.messages.create(model=MODEL, max_tokens=50, messages=user("list"))
    assert first.stop_reason == "tool_use"
    follow_up = [
        *user("list"),
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}],
        },
    ]
    assert await ask(client, follow_up) == "saw the listing"
    # a text rule does not fire again on the tool-result turn (its last user text is empty)
    assert fake.requests[-1].responder == "rule reply"


async def test_match_model_stream_and_predicate(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.when(Reply.of("haiku"), model="claude-haiku")
    fake.when(Reply.of("json only"), stream=False)

    def has_system(req: MessagesRequest) -> bool:
        return "system" in req.body

    fake.when(Reply.of("with system"), predicate=has_system)
    fake.when(Reply.of("default"))
    assert await ask(client, user("a"), model="claude-haiku") == "haiku"
    assert await ask(client, user("a"), system="be brief") == "with system"
    assert await ask(client, user("a")) == "default"
    with trio.fail_after(5):
        message = await client.messages.create(model=MODEL, max_tokens=5, messages=user("a"))
    assert message.content[0].type == "text" and message.content[0].text == "json only"


async def test_match_object_and_times(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    rule = fake.match(Match(last_user_text="hi"), Reply.of("twice"), times=2)
    fake.when(Reply.of("after"), last_user_text="hi")
    assert [await ask(client, user("hi")) for _ in range(3)] == ["twice", "twice", "after"]
    assert rule.served == 2 and rule.exhausted
    assert rule not in fake.script.rules


async def test_rules_before_queue_and_removal(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.enqueue(Reply.of("queued"))
    rule = fake.when(Reply.of("rule"))
    assert await ask(client, user("a")) == "rule"
    fake.script.remove(rule)
    assert await ask(client, user("a")) == "queued"
    fake.when(Reply.of("x"))
    fake.enqueue(Reply.of("y"))
    fake.script.clear()
    assert fake.script.rules == [] and fake.script.pending == 0


async def test_responder_function(fake: FakeProvider, client: anthropic.AsyncAnthropic) -> None:
    def echo(req: MessagesRequest) -> Reply | None:
        text = req.last_user_text()
        if text == "pass":
            return None  # let the next source answer
        return Reply.of(f"{req.model}: {text.upper()}")

    fake.when(echo)
    fake.enqueue(Reply.of("from the queue"))
    assert await ask(client, user("shout")) == f"{MODEL}: SHOUT"
    assert await ask(client, user("pass")) == "from the queue"


async def test_error_rule_for_one_model(
    fake: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    fake.when(ErrorReply(404, message="model: claude-gone"), model="claude-gone")
    fake.when(Reply.of("fine"))
    with trio.fail_after(5):
        try:
            await client.messages.create(model="claude-gone", max_tokens=5, messages=user("a"))
        except anthropic.NotFoundError as exc:
            assert exc.api_message == "model: claude-gone"
        else:
            raise AssertionError("expected NotFoundError")
    assert await ask(client, user("a")) == "fine"


def test_match_without_network() -> None:
    """``Match`` on hand-made requests (the same checks the provider runs)."""
    from hermes.fake.records import RequestRecord

    def req(body: dict[str, Any]) -> MessagesRequest:
        record = RequestRecord(1, "req", "POST", "/v1/messages", [], b"", 0.0, 0.0)
        return MessagesRequest(body, record)

    base = {"model": "m", "max_tokens": 5}
    results = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}
    assert Match(tool_result_ids=["t1"]).matches(req({**base, "messages": [results]}))
    assert not Match(tool_result_ids=["t1", "t2"]).matches(req({**base, "messages": [results]}))
    assert not Match(tool_result_ids=["t1"]).matches(req({**base, "messages": user("t1")}))
    assistant_last = [*user("hello"), {"role": "assistant", "content": "hi"}]
    assert not Match(last_user_text="hello").matches(req({**base, "messages": assistant_last}))
    assert Match().matches(req({**base, "messages": user("x")}))
