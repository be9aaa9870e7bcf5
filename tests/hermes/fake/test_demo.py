"""The built-in offline demo model, through the real SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import pytest
import trio

from hermes.fake import DEMO_NAME, FakeProvider, open_fake_provider
from hermes.fake.demo import find_path, split_tasks

from .conftest import API_KEY, MODEL, make_client, user


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": name, "input_schema": {"type": "object"}}


TOOLS = [tool("terminal"), tool("read_file"), tool("delegate_task")]


@pytest.fixture
async def demo() -> AsyncIterator[FakeProvider]:
    async with open_fake_provider(api_key=API_KEY) as provider:
        yield provider


@pytest.fixture
async def client(demo: FakeProvider) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with make_client(demo) as c:
        yield c


async def run(client: anthropic.AsyncAnthropic, messages: list[Any], **kw: Any) -> Any:
    options: dict[str, Any] = {"model": MODEL, "max_tokens": 1000, **kw}
    with trio.fail_after(5):
        async with client.messages.stream(messages=messages, **options) as s:
            return await s.get_final_message()


def text_of(message: Any) -> str:
    return "".join(b.text for b in message.content if b.type == "text")


async def test_plain_answer_says_it_is_the_demo(
    demo: FakeProvider, client: anthropic.AsyncAnthropic
) -> None:
    message = await run(client, user("What is the capital of France?"))
    text = text_of(message)
    assert DEMO_NAME in text and "not Claude" in text
    assert "What is the capital of France?" in text
    assert message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"]
    assert demo.requests[-1].responder == "demo"


async def test_plain_answer_non_streaming(client: anthropic.AsyncAnthropic) -> None:
    with trio.fail_after(5):
        message = await client.messages.create(model=MODEL, max_tokens=500, messages=user("hi"))
    assert DEMO_NAME in text_of(message)


async def test_list_files_calls_terminal_ls(client: anthropic.AsyncAnthropic) -> None:
    message = await run(client, user("Please list the files here"), tools=TOOLS)
    tool_use = message.content[-1]
    assert tool_use.type == "tool_use"
    assert tool_use.name == "terminal" and tool_use.input == {"command": "ls"}
    assert message.stop_reason == "tool_use"


async def test_list_files_without_terminal_says_so(client: anthropic.AsyncAnthropic) -> None:
    message = await run(client, user("list files"), tools=[tool("read_file")])
    assert [b.type for b in message.content] == ["text"]
    assert "`terminal`" in text_of(message)
    message = await run(client, user("list files"))
    assert [b.type for b in message.content] == ["text"]


async def test_read_file_calls_read_file(client: anthropic.AsyncAnthropic) -> None:
    message = await run(client, user("Can you read README.md?"), tools=TOOLS)
    tool_use = message.content[-1]
    assert tool_use.type == "tool_use"
    assert tool_use.name == "read_file" and tool_use.input == {"path": "README.md"}


async def test_parallel_delegates_a_batch(client: anthropic.AsyncAnthropic) -> None:
    prompt = "In parallel: count the lines in a.py; summarise b.md, and check the tests"
    message = await run(client, user(prompt), tools=TOOLS)
    tool_use = message.content[-1]
    assert tool_use.type == "tool_use" and tool_use.name == "delegate_task"
    assert tool_use.input == {
        "tasks": [
            {"goal": "count the lines in a.py"},
            {"goal": "summarise b.md"},
            {"goal": "check the tests"},
        ]
    }


async def test_summarises_tool_results(client: anthropic.AsyncAnthropic) -> None:
    first = await run(client, user("list files"), tools=TOOLS)
    tool_use = first.content[-1]
    conversation = [
        *user("list files"),
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_use.id,
                    "content": [{"type": "text", "text": "README.md\nhermes\ntests"}],
                }
            ],
        },
    ]
    message = await run(client, conversation, tools=TOOLS)
    text = text_of(message)
    assert message.stop_reason == "end_turn"
    assert "terminal (ok): README.md" in text and DEMO_NAME in text


async def test_summary_marks_failures(client: anthropic.AsyncAnthropic) -> None:
    conversation = [
        *user("read x.txt"),
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "x"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "No such file",
                    "is_error": True,
                }
            ],
        },
    ]
    message = await run(client, conversation, tools=TOOLS)
    assert "read_file (failed): No such file" in text_of(message)


async def test_thinking_when_enabled(client: anthropic.AsyncAnthropic) -> None:
    message = await run(
        client,
        user("list files"),
        tools=TOOLS,
        thinking={"type": "enabled", "budget_tokens": 1024},
        max_tokens=2000,
    )
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert "demo rule: list files" in message.content[0].thinking
    assert message.content[0].signature.startswith("demo-signature-")


async def test_stop_sequence_and_max_tokens(client: anthropic.AsyncAnthropic) -> None:
    cut = await run(client, user("hello"), stop_sequences=["demo"])
    assert cut.stop_reason == "stop_sequence" and cut.stop_sequence == "demo"
    assert text_of(cut).endswith("offline ")
    short = await run(client, user("hello"), max_tokens=5)
    assert short.stop_reason == "max_tokens" and len(text_of(short)) == 20


async def test_deterministic(client: anthropic.AsyncAnthropic) -> None:
    first = await run(client, user("Tell me a story"))
    second = await run(client, user("Tell me a story"))
    assert text_of(first) == text_of(second)


async def test_streams_in_several_deltas(client: anthropic.AsyncAnthropic) -> None:
    deltas = 0
    with trio.fail_after(5):
        async with client.messages.stream(model=MODEL, max_tokens=500, messages=user("hi")) as s:
            async for event in s:
                deltas += event.type == "text"
    assert deltas > 3


def test_helpers() -> None:
    assert split_tasks("do these at the same time: a, b and c") == ["a", "b", "c"]
    assert split_tasks("run tests in parallel") == ["run tests"]
    assert split_tasks("in parallel:\n- one\n- two") == ["one", "two"]
    assert find_path("please read /etc/hosts.") == "/etc/hosts"
    assert find_path("open src/app.py, then stop") == "src/app.py"
    assert find_path("read the thing") is None
