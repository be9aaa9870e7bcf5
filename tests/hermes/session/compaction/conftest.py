"""Fixtures and helpers of the compaction tests: a small window, a scripted aux model.

The session runs with a 20,000-token window and 1,000 output tokens, so the
threshold is 9,500 tokens (50 %: the 75 % floor for windows under 512K is
turned off here, ``small_window=0``; ``test_summary_failures.py`` checks it at
the defaults); the main model reports a large prompt through its usage, and
the summary call goes to ``claude-aux`` (scripted by model; ``is_summary``
finds a summary request on any model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs
import pytest
import trio

from hermes.compression import SUMMARY_SYSTEM, CompressionSettings, threshold_tokens
from hermes.fake import (
    FakeProvider,
    MessagesRequest,
    Reply,
    RequestRecord,
    Usage,
)
from hermes.memory import MemoryStore, MemoryTool
from hermes.model import EventSink, ModelClient, ModelRequest, ModelResponse
from hermes.session import (
    SessionDeps,
    SessionHandle,
    Subscriber,
    TurnEnd,
)
from hermes.session.events import SessionEvent
from hermes.tools import Tool, ToolContext, ToolKind, ToolOutcome, ToolRegistry, default_registry

from ...fake_model import STRICT, FakeSetup
from ..conftest import MODEL, SessionFactory
from ..control_helpers import next_event
from ..helpers import body_texts

AUX = "claude-aux"
WINDOW = 20_000
MAX_TOKENS = 1_000
SETTINGS = CompressionSettings(
    aux_model=AUX,
    protect_first=3,
    protect_last=4,
    tail_ratio=0.05,
    summary_timeout=5.0,
    small_window=0,
)
THRESHOLD = threshold_tokens(WINDOW, MAX_TOKENS, SETTINGS)  # 9,500
BIG = 12_000
"""A prompt size over the threshold, reported by the main model."""

SUMMARY = "\n".join(
    [
        "## Goal and user requests",
        "The user asked a series of numbered questions about the project.",
        "## Progress and completed actions",
        "Questions 1 to 3 were answered in detail; nothing was run.",
        "## Key decisions and facts",
        "AUX-SUMMARY-FACT: the answers are long filler text.",
        "## Files and commands touched",
        "None.",
        "## Open problems and next steps",
        "Answer the next question.",
    ]
)
FILLER = "lorem ipsum dolor sit amet " * 45  # ~1,200 characters, ~300 tokens


def big(text: str, tokens: int = BIG) -> Reply:
    """A reply reporting a prompt of ``tokens`` tokens."""
    usage = Usage(
        input_tokens=tokens,
        output_tokens=50,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
    )
    return Reply.of(text, usage=usage)


def small(text: str) -> Reply:
    usage = Usage(
        input_tokens=3_000,
        output_tokens=50,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
    )
    return Reply.of(text, usage=usage)


@pytest.fixture
def fake_setup() -> FakeSetup:
    return STRICT


class GatedClient(ModelClient):
    """A real client that holds requests to the aux model while ``gate`` is set and closed."""

    gate: trio.Event | None = None
    held: trio.Event | None = None
    """Set once a summary request is being held."""

    async def complete(
        self, request: ModelRequest, on_event: EventSink | None = None
    ) -> ModelResponse:
        if self.gate is not None and request.model == AUX:
            if self.held is not None:
                self.held.set()
            await self.gate.wait()
        return await super().complete(request, on_event)

    def hold_summaries(self) -> trio.Event:
        """From now on, summary calls wait until the returned event is set."""
        self.gate, self.held = trio.Event(), trio.Event()
        return self.gate


@pytest.fixture
def client_type() -> type[ModelClient]:
    return GatedClient


class GateTool(Tool):
    """Waits until the test opens the gate (a tool call the test controls)."""

    name = "gate"
    description = "Wait for the gate (test tool)."
    kind = ToolKind.OTHER

    def __init__(self) -> None:
        self.entered = trio.Event()
        self.open = trio.Event()

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutcome:
        self.entered.set()
        await self.open.wait()
        return ToolOutcome.ok("the gate opened")


@pytest.fixture
def gate() -> GateTool:
    return GateTool()


@pytest.fixture
def registry(gate: GateTool) -> ToolRegistry:
    registry = default_registry()
    registry.register(MemoryTool())
    registry.register(gate)
    return registry


@pytest.fixture
def deps(deps: SessionDeps, memory: MemoryStore) -> SessionDeps:
    return attrs.evolve(deps, memory=memory)


@pytest.fixture
def open_compacting(open_session: SessionFactory) -> SessionFactory:
    async def start(session_id: str | None = None, **overrides: Any) -> SessionHandle:
        settings = {
            "compression": SETTINGS,
            "context_window": WINDOW,
            "max_tokens": MAX_TOKENS,
            "load_context_files": False,
            **overrides,
        }
        return await open_session(session_id=session_id, **settings)

    return start


def is_summary(request: MessagesRequest | RequestRecord) -> bool:
    """Whether ``request`` is a summary call (its system prompt is the summariser's)."""
    system = request.body.get("system", "")
    text = system if isinstance(system, str) else "".join(b.get("text", "") for b in system)
    return SUMMARY_SYSTEM in text


def aux_requests(fake: FakeProvider) -> list[RequestRecord]:
    return [r for r in fake.message_requests if r.body["model"] == AUX]


def main_requests(fake: FakeProvider) -> list[RequestRecord]:
    return [r for r in fake.message_requests if r.body["model"] == MODEL]


def wire_text(record: RequestRecord) -> str:
    """Every text of a request's messages, joined."""
    return "\n".join(t for m in record.body["messages"] for t in body_texts(m))


def events_of(seen: list[SessionEvent], kind: str) -> list[Any]:
    return [e.payload for e in seen if e.type == kind]


async def collect_until(
    sub: Subscriber, kind: str, where: Callable[[Any], bool] | None = None
) -> tuple[Any, list[SessionEvent]]:
    seen: list[SessionEvent] = []
    event = await next_event(sub, kind, where, seen=seen)
    return event.payload, seen


async def long_turns(
    session: SessionHandle, fake: FakeProvider, count: int, first: int = 1
) -> None:
    """``count`` completed turns, each answered with ~300 tokens of filler."""
    for n in range(first, first + count):
        fake.enqueue(small(f"answer {n}: {FILLER}"))
        result = await session.run(f"question {n}")
        assert result.reason is TurnEnd.COMPLETED, result


async def four_turns_then_big(session: SessionHandle, fake: FakeProvider) -> None:
    """Turns 1-4 (the 4th reports a prompt over the threshold): turn 5 will compact."""
    await long_turns(session, fake, 3)
    fake.enqueue(big(f"answer 4: {FILLER}"))
    assert (await session.run("question 4")).reason is TurnEnd.COMPLETED
