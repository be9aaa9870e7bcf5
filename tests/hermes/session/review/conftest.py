"""Fixtures and helpers of the background-review tests: a memory store, a scripted reviewer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from hermes.fake import (
    Endless,
    FakeProvider,
    MessagesRequest,
    Reply,
    RequestRecord,
    ToolUse,
)
from hermes.fake.script import Scripted
from hermes.memory import MemoryStore, MemoryTool
from hermes.model import EventSink, ModelClient, ModelRequest, ModelResponse
from hermes.review import ReviewSettings
from hermes.session import (
    SessionDeps,
    SessionHandle,
    Subscriber,
)
from hermes.tools import ToolRegistry, default_registry

from ...fake_model import STRICT, FakeSetup
from ..conftest import SessionFactory
from ..control_helpers import next_event
from ..helpers import body_texts

REVIEW_MARK = "[Background memory review"
REVIEWER = "claude-review"


def is_review(req: MessagesRequest) -> bool:
    return any(REVIEW_MARK in text for m in req.messages for text in body_texts(m))


def record_is_review(record: RequestRecord) -> bool:
    return any(REVIEW_MARK in text for m in record.body["messages"] for text in body_texts(m))


def review_requests(fake: FakeProvider) -> list[RequestRecord]:
    return [r for r in fake.message_requests if record_is_review(r)]


def main_requests(fake: FakeProvider) -> list[RequestRecord]:
    return [r for r in fake.message_requests if not record_is_review(r)]


def add(content: str, target: str = "memory") -> ToolUse:
    return ToolUse("memory", {"action": "add", "target": target, "content": content})


def script_review(fake: FakeProvider, *steps: Scripted) -> None:
    """The review's replies, one per review request, in order."""
    for step in steps:
        fake.when(step, predicate=is_review, times=1)


NOTHING = Reply.of("Nothing to save.")
SLOW = Endless(delta="thinking about it ", event_delay=0.01)


@pytest.fixture
def fake_setup() -> FakeSetup:
    return STRICT


class GatedClient(ModelClient):
    """A real client that can hold the requests ``held_if`` picks until ``gate`` is set."""

    held_if: Callable[[ModelRequest], bool] | None = None
    gate: trio.Event | None = None

    async def complete(
        self, request: ModelRequest, on_event: EventSink | None = None
    ) -> ModelResponse:
        if self.held_if is not None and self.gate is not None and self.held_if(request):
            await self.gate.wait()
        return await super().complete(request, on_event)


@pytest.fixture
def client_type() -> type[ModelClient]:
    return GatedClient


@pytest.fixture
def registry() -> ToolRegistry:
    registry = default_registry()
    registry.register(MemoryTool())
    return registry


@pytest.fixture
def deps(deps: SessionDeps, memory: MemoryStore) -> SessionDeps:
    return attrs.evolve(deps, memory=memory)


@pytest.fixture
def open_reviewing(open_session: SessionFactory) -> SessionFactory:
    """A session reviewing after every turn (unless ``review=`` says otherwise)."""

    async def start(session_id: str | None = None, **overrides: Any) -> SessionHandle:
        settings = {"review": ReviewSettings(interval=1), "load_context_files": False}
        return await open_session(session_id=session_id, **{**settings, **overrides})

    return start


async def review_done(sub: Subscriber, turn: int | None = None) -> Any:
    where: Callable[[Any], bool] | None = None if turn is None else (lambda p: p.turn == turn)
    return (await next_event(sub, "ReviewCompleted", where)).payload


def file_bytes(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None
