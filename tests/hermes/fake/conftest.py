"""Fixtures for the fake provider tests: a provider on loopback and a real SDK client."""

from __future__ import annotations

import gc
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import httpx2
import pytest
import trio

from hermes.fake import FakeProvider

from ..fake_model import CHECKED, KEY, FakeSetup

API_KEY = KEY
MODEL = "claude-test"


def make_client(
    fake: FakeProvider, *, max_retries: int = 0, api_key: str = API_KEY, **options: Any
) -> anthropic.AsyncAnthropic:
    """A real SDK client pointed at ``fake`` (no proxies, no SDK retries unless asked)."""
    return anthropic.AsyncAnthropic(
        api_key=api_key,
        base_url=fake.base_url,
        max_retries=max_retries,
        http_client=httpx2.AsyncClient(trust_env=False),
        **options,
    )


def user(text: str) -> list[dict[str, Any]]:
    """A one-message conversation."""
    return [{"role": "user", "content": text}]


@pytest.fixture
def fake_setup() -> FakeSetup:
    """The shared ``fake`` requires ``API_KEY``, answers only what the test scripts,
    and checks on exit that it had no error."""
    return CHECKED


@pytest.fixture
async def client(fake: FakeProvider) -> AsyncIterator[anthropic.AsyncAnthropic]:
    """An ``AsyncAnthropic`` on ``fake`` with SDK retries off."""
    async with make_client(fake) as c:
        yield c


@asynccontextmanager
async def sdk_stream_generators_collected() -> AsyncIterator[None]:
    """Collect the SDK's async generators left suspended by an error inside a stream.

    When an ``event: error`` arrives (or the ``messages.stream()`` helper fails
    to parse tool JSON), the SDK raises from inside its SSE generators without
    closing them; trio then warns (ResourceWarning)
    whenever they are garbage collected. The sockets are closed; only the
    generator objects linger. Tests that provoke it collect them here, quietly,
    so ``-W error::ResourceWarning`` runs stay meaningful for real leaks. Drop
    references to the caught exception inside the block.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message=r"Async generator '(anthropic|httpx2|httpcore2)\.",
            category=ResourceWarning,
        )
        try:
            yield
        finally:
            # trio finalizes an outer generator in a task, which then drops the inner ones
            for _ in range(5):
                gc.collect()
                await trio.sleep(0.001)
