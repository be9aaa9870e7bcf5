"""Transcript and stream types: our own frozen attrs classes, Anthropic-native in shape.

Nothing outside ``hermes/model/`` sees an SDK object; ``convert.py`` is the only
place that turns these into request parameters and SDK events into these.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

Role = Literal["user", "assistant"]


# -- content blocks --------------------------------------------------------------------


@attrs.frozen(slots=True)
class TextBlock:
    text: str
    cache: bool = False
    """Mark a ``cache_control`` breakpoint after this block."""


@attrs.frozen(slots=True)
class ThinkingBlock:
    thinking: str
    signature: str


@attrs.frozen(slots=True)
class RedactedThinkingBlock:
    data: str


@attrs.frozen(slots=True)
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]


@attrs.frozen(slots=True)
class ToolResultBlock:
    tool_use_id: str
    content: str | tuple[TextBlock | ImageBlock, ...]
    is_error: bool = False
    cache: bool = False


@attrs.frozen(slots=True)
class ImageBlock:
    media_type: str
    data: str
    """Base64-encoded image bytes."""


ContentBlock = (
    TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock | ImageBlock
)


@attrs.frozen(slots=True)
class Message:
    role: Role
    content: tuple[ContentBlock, ...]

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", (TextBlock(text),))

    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolUseBlock))


@attrs.frozen(slots=True)
class ToolSpec:
    """A tool offered to the model."""

    name: str
    description: str
    input_schema: dict[str, Any]


@attrs.frozen(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read: fresh input plus cache writes and reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


def _temperature(_: object, __: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"temperature: expected a number from 0 to 1 or None, got {value!r}")


@attrs.frozen(slots=True)
class ModelRequest:
    """One call: the system prompt in cache tiers, the conversation and the tools."""

    model: str
    messages: tuple[Message, ...]
    max_tokens: int = 4096
    system: tuple[TextBlock, ...] = ()
    """System prompt blocks; a block with ``cache=True`` ends a cached tier."""
    tools: tuple[ToolSpec, ...] = ()
    thinking_budget: int | None = None
    stop_sequences: tuple[str, ...] = ()
    cache_conversation: bool = True
    """Put a cache breakpoint at the end of the conversation prefix."""
    tool_choice: Literal["auto", "any", "none"] | None = None
    """``none`` offers the tools (history may hold tool_use blocks) but forbids calling them."""
    temperature: float | None = attrs.field(default=None, validator=_temperature)
    """Sampling temperature, 0 to 1; None sends none (the model's default). The SDK's
    ``messages.create`` has no such keyword since 1.0: it goes as an extra body field."""


@attrs.frozen(slots=True)
class ModelResponse:
    """A complete assistant message, checked: it ended with ``message_stop``."""

    id: str
    model: str
    message: Message
    stop_reason: str
    stop_sequence: str | None
    usage: Usage
    attempts: int = 1
    malformed_inputs: dict[str, str] = attrs.field(factory=dict)
    """tool_use id -> why its arguments were unusable (their block holds ``{}``).

    Only on the last attempt the retry policy allows: the caller answers those
    calls with an error result instead of running them.
    """


# -- stream events ---------------------------------------------------------------------


@attrs.frozen(slots=True)
class TextDelta:
    index: int
    text: str


@attrs.frozen(slots=True)
class ThinkingDelta:
    index: int
    thinking: str


@attrs.frozen(slots=True)
class SignatureDelta:
    index: int
    signature: str


@attrs.frozen(slots=True)
class ToolUseStart:
    index: int
    id: str
    name: str


@attrs.frozen(slots=True)
class ToolInputDelta:
    index: int
    partial_json: str


@attrs.frozen(slots=True)
class ToolUseComplete:
    index: int
    block: ToolUseBlock


@attrs.frozen(slots=True)
class MessageComplete:
    response: ModelResponse


@attrs.frozen(slots=True)
class AttemptFailed:
    """An attempt failed and will be retried: discard what it streamed so far."""

    attempt: int
    reason: str
    delay: float
    model: str


ModelEvent = (
    TextDelta
    | ThinkingDelta
    | SignatureDelta
    | ToolUseStart
    | ToolInputDelta
    | ToolUseComplete
    | MessageComplete
    | AttemptFailed
)
