"""A fake Anthropic Messages API server on trio + h11, for tests, benchmarks and offline use.

It speaks ``POST /v1/messages`` (JSON and SSE) exactly as the real API does,
lets tests script replies, errors and transport faults, records every request
with its timing and how it ended, and answers unscripted requests with a small
deterministic demo model. See ``docs/fake-provider.md``.

::

    async with open_fake_provider(api_key="test-key") as fake:
        fake.enqueue(Reply.of("Hello"))
        fake.when(ErrorReply(529, retry_after_ms=5), last_user_text="overload me")
        ...
        record = fake.requests[-1]
        await record.wait_disconnect()
"""

from .demo import DEMO_NAME, demo_reply
from .provider import DEFAULT_MODELS, FakeProvider, open_fake_provider
from .records import Outcome, RequestRecord
from .request import MessagesRequest
from .script import (
    Endless,
    ErrorEvent,
    ErrorReply,
    FailFirst,
    Hang,
    Match,
    RedactedThinking,
    Reply,
    Reset,
    Rule,
    Script,
    Stall,
    Text,
    Thinking,
    ToolUse,
    Truncate,
    Usage,
)
from .standalone import serve_standalone

__all__ = [
    "DEFAULT_MODELS",
    "DEMO_NAME",
    "Endless",
    "ErrorEvent",
    "ErrorReply",
    "FailFirst",
    "FakeProvider",
    "Hang",
    "Match",
    "MessagesRequest",
    "Outcome",
    "RedactedThinking",
    "Reply",
    "RequestRecord",
    "Reset",
    "Rule",
    "Script",
    "Stall",
    "Text",
    "Thinking",
    "ToolUse",
    "Truncate",
    "Usage",
    "demo_reply",
    "open_fake_provider",
    "serve_standalone",
]
