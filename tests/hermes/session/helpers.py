"""Shared helpers for the session tests: transcript checks and request inspection."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import trio

from hermes.model import Message
from hermes.model.types import TextBlock, ToolResultBlock
from hermes.session import SessionEvent, SessionHandle, TurnEnd
from hermes.store import StoreClient, Transcript


def tool_results(message: Message) -> list[ToolResultBlock]:
    """The tool_result blocks of one message, in order."""
    return [b for b in message.content if isinstance(b, ToolResultBlock)]


def result_text(block: ToolResultBlock) -> str:
    if isinstance(block.content, str):
        return block.content
    return "".join(b.text for b in block.content if isinstance(b, TextBlock))


def all_results(transcript: Transcript) -> list[ToolResultBlock]:
    """Every tool_result of the transcript, in transcript order."""
    return [r for m in transcript.messages for r in tool_results(m)]


def results_by_id(transcript: Transcript) -> dict[str, ToolResultBlock]:
    return {r.tool_use_id: r for r in all_results(transcript)}


def assert_valid(transcript: Transcript) -> None:
    """Roles alternate (starting with the user), and every tool_use has exactly one result
    in the message right after it, in the same order as the uses."""
    messages = transcript.messages
    assert messages, "empty transcript"
    assert messages[0].role == "user"
    for before, after in itertools.pairwise(messages):
        assert before.role != after.role, f"two {before.role} messages in a row"
    for index, message in enumerate(messages):
        if message.role != "assistant":
            continue
        uses = [u.id for u in message.tool_uses()]
        if not uses:
            continue
        assert index + 1 < len(messages), f"tool uses {uses} have no results message"
        got = [r.tool_use_id for r in tool_results(messages[index + 1])]
        assert got == uses, f"results {got} do not answer uses {uses} in order"
    assert transcript.open_tool_uses == ()


async def completed_results(
    session: SessionHandle, store: StoreClient, text: str
) -> dict[str, ToolResultBlock]:
    """Run ``text`` as a turn that must complete; its valid transcript's results by id."""
    with trio.fail_after(30):
        result = await session.run(text)
    assert result.reason is TurnEnd.COMPLETED
    transcript = await store.load(session.id)
    assert_valid(transcript)
    return results_by_id(transcript)


def types(events: Iterable[SessionEvent]) -> list[str]:
    return [e.type for e in events]


def payloads(events: Iterable[SessionEvent], kind: str) -> list[Any]:
    return [e.payload for e in events if e.type == kind]


def body_blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A wire message's content as a list of blocks (a bare string becomes a text block)."""
    content = message["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def body_texts(message: Mapping[str, Any]) -> list[str]:
    return [b["text"] for b in body_blocks(message) if b.get("type") == "text"]


def wire_results(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [b for b in body_blocks(message) if b.get("type") == "tool_result"]


def wire_result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content)


def strip_cache(value: Any) -> Any:
    """A wire value without ``cache_control`` markers (they move as the conversation grows)."""
    if isinstance(value, dict):
        return {k: strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache(v) for v in value]
    return value


def system_text(body: Mapping[str, Any]) -> str:
    system = body.get("system", "")
    if isinstance(system, str):
        return system
    return "\n".join(b["text"] for b in system)


def messages_of(bodies: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    return [strip_cache(b["messages"]) for b in bodies]
