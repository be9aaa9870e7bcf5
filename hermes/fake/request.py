"""A parsed ``POST /v1/messages`` request: validation and the views scripts match on."""

from __future__ import annotations

from typing import Any

from .records import RequestRecord

_ROLES = ("user", "assistant")


def validate_messages_body(body: Any, *, count_tokens: bool = False) -> str | None:
    """Return an API-style error message if ``body`` is not a valid request, else ``None``.

    Checks only what the real API rejects most often (missing or mistyped
    ``model``, ``max_tokens``, ``messages`` and roles, a ``temperature`` outside 0-1);
    unknown fields are ignored.
    """
    if not isinstance(body, dict):
        return "Request body must be a JSON object"
    model = body.get("model")
    if model is None:
        return "model: Field required"
    if not isinstance(model, str):
        return "model: Input should be a valid string"
    if not count_tokens:
        max_tokens = body.get("max_tokens")
        if max_tokens is None:
            return "max_tokens: Field required"
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            return "max_tokens: Input should be a positive integer"
    messages = body.get("messages")
    if messages is None:
        return "messages: Field required"
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if not messages:
        return "messages: at least one message is required"
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        if msg.get("role") not in _ROLES:
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = msg.get("content")
        if not isinstance(content, str | list):
            return f"messages.{i}.content: Input should be a valid string or list"
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        return "tools: Input should be a valid list"
    temperature = body.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not 0 <= temperature <= 1
    ):
        return "temperature: Input should be a number from 0 to 1"
    if "stream" in body and not isinstance(body["stream"], bool):
        return "stream: Input should be a valid boolean"
    return None


def block_text(content: Any) -> str:
    """The concatenated text of a message ``content`` (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


class MessagesRequest:
    """A validated ``/v1/messages`` request, as matchers and responders see it.

    ``body`` is the parsed JSON; ``record`` is the provider's ``RequestRecord``
    (headers, timings). The helpers compute on demand.
    """

    __slots__ = ("body", "record")

    def __init__(self, body: dict[str, Any], record: RequestRecord) -> None:
        self.body = body
        self.record = record

    @property
    def model(self) -> str:
        """The requested model name."""
        return str(self.body["model"])

    @property
    def stream(self) -> bool:
        """Whether the client asked for SSE."""
        return self.body.get("stream") is True

    @property
    def max_tokens(self) -> int:
        """The ``max_tokens`` limit (always present on a valid messages request)."""
        value = self.body.get("max_tokens", 4096)
        return value if isinstance(value, int) else 4096

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` list."""
        msgs: list[dict[str, Any]] = self.body["messages"]
        return msgs

    @property
    def retry_count(self) -> int:
        """The SDK's ``x-stainless-retry-count`` (0 on a first attempt or without the SDK)."""
        return self.record.retry_count

    @property
    def thinking_enabled(self) -> bool:
        """Whether extended thinking was requested (``thinking.type`` enabled or adaptive)."""
        thinking = self.body.get("thinking")
        return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")

    @property
    def stop_sequences(self) -> list[str]:
        """The custom stop sequences (strings only)."""
        seqs = self.body.get("stop_sequences") or []
        return [s for s in seqs if isinstance(s, str) and s] if isinstance(seqs, list) else []

    def last_user_text(self) -> str:
        """Text of the final message if it is a user message, else ``""``.

        A user message that only carries ``tool_result`` blocks has no text, so a
        rule matching on text does not fire again on the tool-result follow-up.
        """
        last = self.messages[-1]
        if last.get("role") != "user":
            return ""
        return block_text(last.get("content"))

    def tool_results(self) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks of the final message (if it is a user message)."""
        last = self.messages[-1]
        content = last.get("content")
        if last.get("role") != "user" or not isinstance(content, list):
            return []
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]

    def tool_result_ids(self) -> tuple[str, ...]:
        """The ``tool_use_id`` of each ``tool_result`` in the final message, in order."""
        return tuple(str(b.get("tool_use_id")) for b in self.tool_results())

    def tool_names(self) -> tuple[str, ...]:
        """Names of the tools the request offers."""
        tools = self.body.get("tools")
        if not isinstance(tools, list):
            return ()
        return tuple(t["name"] for t in tools if isinstance(t, dict) and "name" in t)

    @property
    def tools_forbidden(self) -> bool:
        """Whether ``tool_choice`` is ``none``: tools are listed but may not be called."""
        choice = self.body.get("tool_choice")
        return isinstance(choice, dict) and choice.get("type") == "none"

    def offers_tool(self, name: str) -> bool:
        """Whether a tool called ``name`` is offered (and may be called)."""
        return not self.tools_forbidden and name in self.tool_names()

    def tool_use_names(self) -> dict[str, str]:
        """``{tool_use id: tool name}`` over every assistant ``tool_use`` block."""
        found: dict[str, str] = {}
        for msg in self.messages:
            content = msg.get("content")
            if msg.get("role") == "assistant" and isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        found[str(b.get("id"))] = str(b.get("name"))
        return found
