"""The scripting vocabulary: replies, errors and faults a test asks the fake to produce.

A test describes *what the model says* with content blocks (``Text``,
``Thinking``, ``RedactedThinking``, ``ToolUse``) inside a ``Reply``; *what goes
wrong* with ``ErrorReply`` (an HTTP error status), ``FailFirst`` (error the
first K attempts, then answer), a stream ``fault`` on a ``Reply`` (``ErrorEvent``,
``Truncate``, ``Reset``, ``Stall``), ``Hang`` (no headers, ever) and
``Endless`` (a stream that never finishes). All are frozen attrs classes, so a
scripted value can be reused across requests.

Example::

    Reply.of(Thinking("plan"), "Hello", stop_reason="max_tokens")
    Reply.of(ToolUse("terminal", {"command": "ls"}, fragments=('{"comm', 'and": "ls"}')))
    ErrorReply(429, retry_after=0.01)
    FailFirst(2, ErrorReply(529, retry_after_ms=5), then=Reply.of("ok"))
    Reply.of("partial answer", fault=Truncate(after=4))
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

if TYPE_CHECKING:
    from .request import MessagesRequest


def split_every(text: str, size: int | None) -> tuple[str, ...]:
    """Split ``text`` into pieces of ``size`` characters (one piece if ``size`` is None)."""
    if not size or size <= 0 or len(text) <= size:
        return (text,)
    return tuple(text[i : i + size] for i in range(0, len(text), size))


def _opt_tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


# ---------------------------------------------------------------------------
# Content blocks


@attrs.frozen
class Text:
    """A ``text`` block.

    Streamed as one ``text_delta`` per piece: ``deltas`` if given (their
    concatenation is the text, so ``text`` may be left empty), else ``text`` cut
    every ``chunk_size`` characters, else a single delta.
    """

    text: str = ""
    chunk_size: int | None = None
    deltas: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)

    def __attrs_post_init__(self) -> None:
        if self.deltas is not None:
            joined = "".join(self.deltas)
            if not self.text:
                object.__setattr__(self, "text", joined)
            elif joined != self.text:
                raise ValueError("Text.deltas must concatenate to Text.text")

    def pieces(self) -> tuple[str, ...]:
        """The ``text_delta`` strings to stream."""
        return self.deltas if self.deltas is not None else split_every(self.text, self.chunk_size)


@attrs.frozen
class Thinking:
    """A ``thinking`` block: ``thinking_delta`` pieces, then one ``signature_delta``."""

    thinking: str = ""
    signature: str = "fake-thinking-signature"
    chunk_size: int | None = None
    deltas: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)

    def __attrs_post_init__(self) -> None:
        if self.deltas is not None:
            joined = "".join(self.deltas)
            if not self.thinking:
                object.__setattr__(self, "thinking", joined)
            elif joined != self.thinking:
                raise ValueError("Thinking.deltas must concatenate to Thinking.thinking")

    def pieces(self) -> tuple[str, ...]:
        """The ``thinking_delta`` strings to stream."""
        if self.deltas is not None:
            return self.deltas
        return split_every(self.thinking, self.chunk_size)


@attrs.frozen
class RedactedThinking:
    """A ``redacted_thinking`` block (no deltas: start and stop only)."""

    data: str = "fake-redacted-thinking"


@attrs.frozen
class ToolUse:
    """A ``tool_use`` block.

    ``input`` is the parsed input (the non-streaming body uses it). When
    streaming, the ``input_json_delta`` fragments are ``fragments`` if given,
    sent verbatim, so they may be deliberately malformed JSON; otherwise
    ``json.dumps(input)`` cut every ``chunk_size`` characters, after an empty
    first fragment as the real API often sends. If only ``fragments`` is given,
    ``input`` is parsed from them (``{}`` if they are not valid JSON).
    ``id`` defaults to a provider-generated ``toolu_fake_...``.
    """

    name: str
    input: dict[str, Any] | None = None
    id: str | None = None
    fragments: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    chunk_size: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.input is None:
            parsed: Any = {}
            if self.fragments is not None:
                try:
                    parsed = json.loads("".join(self.fragments))
                except ValueError:
                    parsed = {}
            object.__setattr__(self, "input", parsed if isinstance(parsed, dict) else {})

    def input_dict(self) -> dict[str, Any]:
        """The parsed tool input."""
        return self.input if self.input is not None else {}

    def json_fragments(self) -> tuple[str, ...]:
        """The ``partial_json`` strings to stream."""
        if self.fragments is not None:
            return self.fragments
        return ("", *split_every(json.dumps(self.input_dict()), self.chunk_size))


Block: TypeAlias = Text | Thinking | RedactedThinking | ToolUse


def _to_blocks(value: Iterable[Block | str] | Block | str) -> tuple[Block, ...]:
    if isinstance(value, str | Text | Thinking | RedactedThinking | ToolUse):
        value = (value,)
    return tuple(Text(b) if isinstance(b, str) else b for b in value)


# ---------------------------------------------------------------------------
# Usage and stream faults


@attrs.frozen
class Usage:
    """Token usage to report; any field left ``None`` is estimated by the fake.

    ``output_tokens`` is the final (cumulative) count sent in ``message_delta``;
    ``message_start`` carries the input side and ``output_tokens: 1``.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    service_tier: str | None = "standard"


@attrs.frozen
class ErrorEvent:
    """After ``after`` SSE events, send ``event: error`` and end the body (HTTP status stays 200).

    For a non-streaming request the fault is ignored and the reply is sent whole.
    """

    after: int = 3
    error_type: str = "overloaded_error"
    message: str = "Overloaded"


@attrs.frozen
class Truncate:
    """After ``after`` SSE events, end the body cleanly (no ``message_stop``).

    Non-streaming: send the headers (with the full ``content-length``) and half
    the JSON body, then close the connection.
    """

    after: int = 3


@attrs.frozen
class Reset:
    """After ``after`` SSE events, abort the connection with a TCP RST.

    Non-streaming: headers and half the body, then the RST.
    """

    after: int = 3


@attrs.frozen
class Stall:
    """After ``after`` SSE events, send nothing more and keep the connection open.

    The exchange ends when the client gives up (or the provider shuts down).
    Non-streaming: headers and half the body, then silence.
    """

    after: int = 3


StreamFault: TypeAlias = ErrorEvent | Truncate | Reset | Stall


# ---------------------------------------------------------------------------
# Responses


@attrs.frozen
class Reply:
    """A successful message.

    Streamed as the §4 grammar: ``message_start``, ``ping`` (unless
    ``ping=False``), per block ``content_block_start`` / deltas /
    ``content_block_stop``, ``message_delta``, ``message_stop``. Events with no
    delay between them are written together; ``event_delay`` seconds are slept
    before each event after the first, ``delay`` before the response headers.
    SSE events are counted from 1 in that order, which is what a fault's
    ``after`` refers to. ``stop_reason`` defaults to ``"tool_use"`` if there is a
    ``ToolUse`` block, else ``"end_turn"``; ``model`` to the requested model.
    """

    content: tuple[Block, ...] = attrs.field(default=(), converter=_to_blocks)
    stop_reason: str | None = None
    stop_sequence: str | None = None
    stop_details: dict[str, Any] | None = None
    usage: Usage | None = None
    model: str | None = None
    message_id: str | None = None
    delay: float = 0.0
    event_delay: float = 0.0
    ping: bool = True
    fault: StreamFault | None = None
    headers: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=tuple)

    @classmethod
    def of(cls, *blocks: Block | str, **kwargs: Any) -> Reply:
        """``Reply.of("Hi", ToolUse(...), stop_reason=...)``: strings become ``Text`` blocks."""
        return cls(blocks, **kwargs)

    def effective_stop_reason(self) -> str:
        """The stop reason that will be sent."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.content) else "end_turn"


@attrs.frozen
class ErrorReply:
    """An HTTP error response with the API's JSON error body.

    ``error_type`` defaults by status (429 ``rate_limit_error``, 529
    ``overloaded_error``...), ``message`` by type. ``retry_after`` (seconds) and
    ``retry_after_ms`` become the ``retry-after`` / ``retry-after-ms`` headers,
    ``should_retry`` the ``x-should-retry`` header, ``error_code`` the body's
    ``error.details.error_code``. A 429 without ``retry_after`` gets
    ``retry-after: 0`` unless ``retry_after_ms`` is set; tests should pass a few ms.
    """

    status: int
    message: str | None = None
    error_type: str | None = None
    retry_after: float | str | None = None
    retry_after_ms: float | None = None
    should_retry: bool | None = None
    error_code: str | None = None
    headers: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=tuple)
    delay: float = 0.0


@attrs.frozen
class Hang:
    """Read the request, then never send headers.

    The exchange ends when the client leaves; with ``close_after`` seconds the
    server instead closes the connection without a response (the SDK then sees
    a transport error).
    """

    close_after: float | None = None


@attrs.frozen
class Endless:
    """A stream that never finishes: one text block receiving ``delta`` every ``event_delay`` s.

    A non-streaming request gets no headers (like ``Hang``).
    """

    delta: str = "tick "
    event_delay: float = 0.02


Response: TypeAlias = Reply | ErrorReply | Hang | Endless

#: A function computing a response from the request; ``None`` passes to the next source.
Responder: TypeAlias = "Callable[[MessagesRequest], Response | None]"


@attrs.frozen
class FailFirst:
    """Answer the first ``k`` attempts with ``error``, then with ``then``.

    By default attempts are counted per script entry (each request that reaches
    it). With ``per_call=True`` the SDK's ``x-stainless-retry-count`` header is
    used instead, so every logical call fails its first ``k`` attempts (the SDK's
    own retries must be on for that). ``then=None`` passes the request on to the
    next script entry (or the demo model) once the failures are spent.
    """

    k: int
    error: ErrorReply
    then: Response | Responder | None = None
    per_call: bool = False


#: Anything a test may script.
Scripted: TypeAlias = "Response | FailFirst | Responder"

_RESPONSE_TYPES = (Reply, ErrorReply, Hang, Endless)


# ---------------------------------------------------------------------------
# Matching and the script itself


@attrs.frozen
class Match:
    """Conditions on a request; all given ones must hold.

    - ``last_user_text``: a substring (str) or a regex (``re.Pattern``, searched)
      of the final user message's text (see ``MessagesRequest.last_user_text``).
    - ``tool_result_ids``: every id listed appears among the final message's
      ``tool_result`` blocks.
    - ``model``: exact model name.
    - ``stream``: ``True`` for SSE requests only, ``False`` for JSON only.
    - ``predicate``: any function of the ``MessagesRequest``.
    """

    last_user_text: str | re.Pattern[str] | None = None
    tool_result_ids: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    model: str | None = None
    stream: bool | None = None
    predicate: Callable[[MessagesRequest], bool] | None = None

    def matches(self, req: MessagesRequest) -> bool:
        """Whether ``req`` satisfies every condition."""
        if self.model is not None and req.model != self.model:
            return False
        if self.stream is not None and req.stream != self.stream:
            return False
        if self.last_user_text is not None:
            text = req.last_user_text()
            if isinstance(self.last_user_text, str):
                if self.last_user_text not in text:
                    return False
            elif self.last_user_text.search(text) is None:
                return False
        if self.tool_result_ids is not None:
            have = set(req.tool_result_ids())
            if not have or not set(self.tool_result_ids) <= have:
                return False
        return self.predicate is None or self.predicate(req)


@attrs.define(eq=False)
class Rule:
    """One script entry (a matched rule or a queued response) and its counters.

    ``times`` is how many replies it gives before it is removed (``None``:
    forever); failures injected by ``FailFirst`` do not count. ``served`` counts
    replies, ``failures`` injected failures.
    """

    response: Scripted
    match: Match | None = None
    times: int | None = None
    served: int = 0
    failures: int = 0

    @property
    def exhausted(self) -> bool:
        """Whether the entry has given all its replies."""
        return self.times is not None and self.served >= self.times


class Script:
    """Where responses come from, in order: matching rules, then the queue, then the fallback.

    - ``when(response, **conditions)`` adds a rule (checked in the order added).
    - ``enqueue(*responses)`` appends to a FIFO consumed by any request no rule took.
    - ``fallback`` answers everything else (the provider sets the demo model, or
      a 500 ``api_error`` "nothing scripted" when the demo is off).
    """

    def __init__(self, fallback: Callable[[MessagesRequest], Response] | None = None) -> None:
        self.rules: list[Rule] = []
        self.queue: list[Rule] = []
        self.fallback = fallback

    def enqueue(self, *responses: Scripted) -> None:
        """Queue responses, each used for one request (``FailFirst``: k failures + one reply)."""
        self.queue.extend(Rule(r, times=1) for r in responses)

    def when(
        self,
        response: Scripted,
        *,
        match: Match | None = None,
        times: int | None = None,
        last_user_text: str | re.Pattern[str] | None = None,
        tool_result_ids: Iterable[str] | None = None,
        model: str | None = None,
        stream: bool | None = None,
        predicate: Callable[[MessagesRequest], bool] | None = None,
    ) -> Rule:
        """Answer requests matching the conditions (or ``match``) with ``response``."""
        if match is None:
            match = Match(
                last_user_text=last_user_text,
                tool_result_ids=tool_result_ids,
                model=model,
                stream=stream,
                predicate=predicate,
            )
        rule = Rule(response, match=match, times=times)
        self.rules.append(rule)
        return rule

    def remove(self, rule: Rule) -> None:
        """Drop a rule added with ``when``."""
        self.rules.remove(rule)

    def clear(self) -> None:
        """Drop every rule and queued response."""
        self.rules.clear()
        self.queue.clear()

    @property
    def pending(self) -> int:
        """Queued responses not yet used."""
        return len(self.queue)

    def resolve(self, req: MessagesRequest) -> tuple[Response, str]:
        """Pick the response for ``req`` and a label of its source (``rule``/``queue``/...)."""
        if self.rules:
            for rule in list(self.rules):
                if rule.match is not None and not rule.match.matches(req):
                    continue
                resp = _serve(rule, req)
                if rule.exhausted:
                    self.rules.remove(rule)
                if resp is not None:
                    return resp, "rule"
        while self.queue:
            head = self.queue[0]
            resp = _serve(head, req)
            if head.exhausted:
                self.queue.pop(0)
            if resp is not None:
                return resp, "queue"
        if self.fallback is None:
            # ``x-should-retry: false``: a test's missing script is no outage to wait out
            # (the client does not retry it, and a turn does not park for it).
            unscripted = ErrorReply(
                500, message="fake provider: nothing scripted for this request", should_retry=False
            )
            return unscripted, "unscripted"
        return self.fallback(req), "fallback"


def _serve(rule: Rule, req: MessagesRequest) -> Response | None:
    """One use of ``rule``: an injected failure, a reply, or ``None`` (pass on)."""
    scripted: Scripted | None = rule.response
    if isinstance(scripted, FailFirst):
        fail = req.retry_count < scripted.k if scripted.per_call else rule.failures < scripted.k
        if fail:
            rule.failures += 1
            return scripted.error
        scripted = scripted.then
    rule.served += 1
    if scripted is None or isinstance(scripted, _RESPONSE_TYPES):
        return scripted
    if isinstance(scripted, FailFirst):
        raise TypeError("FailFirst cannot be nested")
    result = scripted(req)
    if result is not None and not isinstance(result, _RESPONSE_TYPES):
        raise TypeError(f"a responder returned {type(result).__name__}, not a response")
    return result
