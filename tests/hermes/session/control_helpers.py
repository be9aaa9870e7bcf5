"""Helpers for the control-verb tests: waiting on events, reading requests, processes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import trio

from hermes.fake import FakeProvider, RequestRecord
from hermes.model import Message, TextBlock, ToolResultBlock
from hermes.procgroup import group_members
from hermes.session import Subscriber
from hermes.session.events import SessionEvent
from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome

from ..fake_model import STRICT, open_fake

# -- a strict fake provider -------------------------------------------------------------


def strict_fake() -> AbstractAsyncContextManager[FakeProvider]:
    """The fake provider without its demo model, checked on exit (``STRICT``); the
    modules that have not moved to overriding ``fake_setup`` still open it by hand."""
    return open_fake(STRICT)


# -- events ------------------------------------------------------------------------------


async def next_event(
    sub: Subscriber,
    kind: str,
    where: Callable[[Any], bool] | None = None,
    *,
    seen: list[SessionEvent] | None = None,
) -> SessionEvent:
    """Read ``sub`` until an event of type ``kind`` (whose payload passes ``where``) comes.

    Everything read on the way, the match included, is appended to ``seen``.
    """
    async for event in sub.receive:
        if seen is not None:
            seen.append(event)
        if event.type == kind and (where is None or where(event.payload)):
            return event
    raise AssertionError(f"the subscription closed before a {kind} event")


async def text_deltas(sub: Subscriber, count: int) -> list[str]:
    """Wait for ``count`` TextDelta events; their texts."""
    return [(await next_event(sub, "TextDelta")).payload.text for _ in range(count)]


async def turn_completed(sub: Subscriber, turn: int | None = None) -> Any:
    """The payload of the next TurnCompleted (of ``turn``, if given)."""
    event = await next_event(
        sub, "TurnCompleted", None if turn is None else (lambda p: p.turn == turn)
    )
    return event.payload


# -- what the fake provider received ----------------------------------------------------


def wire_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or () if isinstance(b, dict)]


def wire_texts(message: Mapping[str, Any]) -> list[str]:
    """The text blocks of one wire message."""
    return [b["text"] for b in wire_blocks(message) if b.get("type") == "text"]


def request_messages(record: RequestRecord) -> list[dict[str, Any]]:
    assert isinstance(record.body, dict), record
    messages = record.body["messages"]
    assert isinstance(messages, list)
    return messages


def message_records(fake: Any) -> list[RequestRecord]:
    return list(fake.message_requests)


# -- stored messages ---------------------------------------------------------------------


def texts(message: Message) -> list[str]:
    return [b.text for b in message.content if isinstance(b, TextBlock)]


def results(message: Message) -> list[ToolResultBlock]:
    return [b for b in message.content if isinstance(b, ToolResultBlock)]


def result_text(block: ToolResultBlock) -> str:
    content = block.content
    if isinstance(content, str):
        return content
    return "".join(b.text for b in content if isinstance(b, TextBlock))


def results_by_id(messages: tuple[Message, ...] | list[Message]) -> dict[str, list[str]]:
    """Every tool result in the transcript, by tool_use id (a list, to catch duplicates)."""
    found: dict[str, list[str]] = {}
    for message in messages:
        for block in results(message):
            found.setdefault(block.tool_use_id, []).append(result_text(block))
    return found


# -- processes and files -----------------------------------------------------------------


def process_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def live_group(pgid: int) -> list[int]:
    return [m.pid for m in group_members(pgid) if not m.zombie]


async def wait_for_file(path: Path, *, poll: float = 0.005) -> str:
    """Wait until ``path`` exists with a complete line; its text (bounded by the caller)."""
    while True:
        try:
            text = await trio.Path(path).read_text()
        except FileNotFoundError:
            text = ""
        if text.endswith("\n"):
            return text
        await trio.sleep(poll)


def gated(flag: str, then: str = "echo released") -> str:
    """A shell command that waits until the file ``flag`` exists, then runs ``then``."""
    return f"while [ ! -e {flag} ]; do sleep 0.005; done; {then}"


# -- a tool that holds the soft interrupt ------------------------------------------------


class HoldTool(Tool):
    """Holds off soft interrupts until released (``holds_interrupt``, as delegate_task)."""

    name = "hold"
    description = "Hold the turn (test tool)."
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}
    kind = ToolKind.OTHER
    holds_interrupt = True

    def __init__(self) -> None:
        self.entered = trio.Event()
        self.release = trio.Event()
        self.interrupted_inside: bool | None = None

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        self.entered.set()
        await self.release.wait()
        self.interrupted_inside = ctx.interrupted
        return ToolOutcome.ok("held and released")


def pid_file_pids(text: str) -> list[int]:
    return [int(part) for part in text.split()]
