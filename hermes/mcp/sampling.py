"""Sampling: a server asks Hermes' model for a completion (``sampling/createMessage``).

Hermes' rule (seeds #129, #150): on by default, no prompt to the person;
each request is admitted against the server's limits, then runs on the
session's model (here: the daemon's model, which every session uses):

- at most ``max_rpm`` requests in a sliding minute (default 10);
- a requested model (``modelPreferences.hints``) only if it is in
  ``allowed_models`` (empty, the default: any); the request still runs on the
  session's model;
- ``maxTokens`` capped at ``max_tokens_cap`` (default 4096).

A refused request is answered with an MCP error saying which limit. Tools in a
sampling request (2025-11-25) are not offered: such a request is refused.
Images and audio in the messages are replaced by a note (the reply is text).
"""

from __future__ import annotations

import collections
import logging

import attrs
import mcp_types as types
import trio

from hermes.model import Message, ModelClient, ModelError, ModelRequest, TextBlock

from .config import SamplingConfig

log = logging.getLogger("hermes.mcp")

SAMPLING_TIMEOUT = 120.0
_STOP = {"end_turn": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence"}


@attrs.frozen(slots=True)
class Sampler:
    """The model the daemon's sessions use, lent to MCP servers for sampling."""

    client: ModelClient
    model: str


class SamplingGate:
    """One server's admission state (the sliding minute) and the call itself."""

    def __init__(self, server: str, limits: SamplingConfig, sampler: Sampler) -> None:
        self.server = server
        self.limits = limits
        self.sampler = sampler
        self._recent: collections.deque[float] = collections.deque()
        self.admitted = 0
        self.refused = 0

    def admit(self, params: types.CreateMessageRequestParams) -> str | None:
        """Why the request is refused, or None (and it is counted in the minute)."""
        if params.tools:
            return "tools in sampling requests are not offered"
        wanted = [
            h.name for h in (params.model_preferences or types.ModelPreferences()).hints or []
        ]
        wanted = [w for w in wanted if w]
        allowed = self.limits.allowed_models
        if allowed and wanted and not any(w in allowed for w in wanted):
            return f"model {wanted[0]!r} is not in allowed_models ({', '.join(allowed)})"
        now = trio.current_time()
        while self._recent and self._recent[0] <= now - 60.0:
            self._recent.popleft()
        if len(self._recent) >= self.limits.max_rpm:
            return f"more than {self.limits.max_rpm} sampling requests in a minute"
        self._recent.append(now)
        return None

    async def __call__(
        self, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        refused = self.admit(params)
        if refused is not None:
            self.refused += 1
            log.info("MCP server %s: sampling refused: %s", self.server, refused)
            return types.ErrorData(
                code=types.INVALID_REQUEST, message=f"sampling refused: {refused}"
            )
        self.admitted += 1
        request = ModelRequest(
            model=self.sampler.model,
            messages=tuple(_message(m) for m in params.messages),
            max_tokens=max(1, min(params.max_tokens, self.limits.max_tokens_cap)),
            system=(TextBlock(params.system_prompt),) if params.system_prompt else (),
            stop_sequences=tuple(params.stop_sequences or ()),
            cache_conversation=False,
        )
        try:
            with trio.fail_after(SAMPLING_TIMEOUT):
                response = await self.sampler.client.complete(request)
        except (ModelError, trio.TooSlowError) as exc:
            return types.ErrorData(
                code=types.INTERNAL_ERROR, message=f"sampling failed: {exc or 'timed out'}"
            )
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(text=response.message.text()),
            model=response.model,
            stop_reason=_STOP.get(response.stop_reason, response.stop_reason),
        )


def _message(message: types.SamplingMessage) -> Message:
    blocks = message.content if isinstance(message.content, list) else [message.content]
    parts = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} omitted]")
    return Message(message.role, (TextBlock("\n".join(parts) or "(empty)"),))
