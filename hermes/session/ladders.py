"""The reply ladders: what a turn does with a reply that is cut, empty or a loop.

``ReplyLadder.judge`` looks at one reply (or a stream the turn cut because it
ran away) and says what to do next; the turn carries it out (``turn.py``). One
ladder serves one step of the turn (one accepted reply), Hermes' order
(seeds #60, #61, #66):

Cut at the output limit (``max_tokens``):
  - a cut tool call is asked again with the output budget doubled each time
    (at most ``BOOST_CAP`` tokens, or half the context window), up to
    ``TOOL_RETRIES`` times;
  - text that repeats, or a reply with nothing but thinking, ends the turn;
  - cut text is kept and the model is asked to continue with a user-role
    nudge, up to ``CONTINUATIONS`` times;
  - after the last attempt the rows the ladder wrote are rolled back and the
    turn fails.

Runaway repetition (``hermes.model.repetition``): a live stream that turns into
a loop is cut; looping text ends the turn (the text is dropped), looping tool
arguments are asked again (``TOOL_RETRIES``). A finished answer of 16,000
characters or more that is repetition-dominated is dropped and ends the turn.

No visible text and no tool call (an empty reply):
  - text streamed by an attempt whose connection then dropped becomes the
    answer;
  - visible text earlier in the turn, followed only by housekeeping tools,
    becomes the answer;
  - after other tool calls the model is nudged once;
  - a thinking-only reply is fed back with a nudge, up to ``PREFILLS`` times;
  - then the request is retried up to ``EMPTY_RETRIES`` times, cut short when
    the empties look deterministic (the same output twice) or expensive (half
    the output budget spent);
  - then the first fallback model is tried once;
  - otherwise the turn ends with the empty answer.
"""

from __future__ import annotations

import json

import attrs

from hermes.model import ModelResponse, ThinkingBlock
from hermes.model.repetition import MIN_CHARS, is_repetition_dominated

CONTINUATIONS = 4
TOOL_RETRIES = 4
PREFILLS = 2
EMPTY_RETRIES = 2
BOOST_CAP = 64_000
HOUSEKEEPING = frozenset({"memory", "todo", "skill_view", "skill_manage", "skills_list"})
"""Tools that tidy up after an answer; calling only these does not void earlier text."""

CONTINUE_NUDGE = (
    "[Your reply was cut off at the output limit. Continue exactly where it stopped; "
    "do not repeat what you already wrote.]"
)
EMPTY_NUDGE = (
    "[Your last reply was empty. Continue from the tool results above, or give your answer.]"
)
THINKING_NUDGE = "[You reasoned but wrote no answer. Write the answer now.]"


@attrs.frozen(slots=True)
class Runaway:
    """The turn cut a stream that ran away: ``tool`` when it was a tool call's arguments."""

    tool: bool


@attrs.frozen(slots=True)
class Accept:
    """Commit the reply and carry on."""


@attrs.frozen(slots=True)
class Continue:
    """Commit the cut reply, add ``CONTINUE_NUDGE``, ask again."""


@attrs.frozen(slots=True)
class Feed:
    """Commit the thinking-only reply, add ``THINKING_NUDGE``, ask again."""


@attrs.frozen(slots=True)
class Nudge:
    """Drop the reply, add ``EMPTY_NUDGE`` to the trailing user message, ask again."""


@attrs.frozen(slots=True)
class Retry:
    """Drop the reply; ask again (``ladder.max_tokens`` and ``ladder.model`` may have moved)."""

    why: str


@attrs.frozen(slots=True)
class Answer:
    """Drop the empty reply: ``text``, written earlier in the turn, is the answer."""

    text: str


@attrs.frozen(slots=True)
class Salvage:
    """Accept the empty reply as ``text``: what a dropped attempt had streamed."""

    text: str


@attrs.frozen(slots=True)
class GiveUp:
    """Roll back what the ladder wrote and fail the turn."""

    reason: str
    detail: str


Verdict = Accept | Continue | Feed | Nudge | Retry | Answer | Salvage | GiveUp


@attrs.define(slots=True, kw_only=True)
class ReplyLadder:
    """The counters of one step's ladders; ``judge`` each reply in turn."""

    model: str
    max_tokens: int
    context_window: int
    fallback_models: tuple[str, ...] = ()
    continued: list[str] = attrs.field(factory=list)
    """Text of the cut replies continued so far (the answer starts with them)."""
    tool_retries: int = 0
    prefills: int = 0
    empties: int = 0
    nudged: bool = False
    fallback_tried: bool = False
    _last_empty: int | None = None

    def judge(
        self,
        reply: ModelResponse | Runaway,
        *,
        earlier_text: str = "",
        housekeeping_only: bool = False,
        after_tools: bool = False,
        streamed: str = "",
    ) -> Verdict:
        """What to do with ``reply``; ``earlier_text``: the turn's last visible text,
        followed by ``housekeeping_only`` tools; ``after_tools``: tool results precede it;
        ``streamed``: text an attempt of this call streamed before its connection dropped."""
        if isinstance(reply, Runaway):
            if reply.tool:
                return self._retry_tool("the tool call's arguments ran away into repetition")
            return GiveUp("repetition", "the reply ran away into repetition and was cut")
        message = reply.message
        text = message.text()
        if reply.stop_reason == "max_tokens":
            return self._cut(reply, text)
        uses = message.tool_uses()
        if uses:
            if any(_looping(json.dumps(u.input)) for u in uses):
                return self._retry_tool("the tool call's arguments repeat themselves")
            return Accept()
        if text.strip():
            if _looping("".join(self.continued) + text):
                return GiveUp("repetition", "the reply was a runaway repetition and was dropped")
            return Accept()
        if streamed.strip():
            return Salvage(streamed)
        return self._empty(reply, earlier_text, housekeeping_only, after_tools)

    def _cut(self, reply: ModelResponse, text: str) -> Verdict:
        if reply.message.tool_uses():
            return self._retry_tool("a tool call was cut at the output limit", boost=True)
        if not text.strip():
            spent = any(isinstance(b, ThinkingBlock) for b in reply.message.content)
            what = "thinking" if spent else "nothing visible"
            return GiveUp("cut_reply", f"the output limit was spent on {what}")
        if _looping("".join(self.continued) + text):
            return GiveUp("repetition", "the cut reply repeats itself")
        if len(self.continued) >= CONTINUATIONS:
            return GiveUp(
                "cut_reply", f"the reply was still cut after {CONTINUATIONS} continuations"
            )
        self.continued.append(text)
        return Continue()

    def _retry_tool(self, why: str, *, boost: bool = False) -> Verdict:
        if self.tool_retries >= TOOL_RETRIES:
            return GiveUp("cut_reply", f"{why}, {TOOL_RETRIES + 1} times")
        self.tool_retries += 1
        if boost:
            cap = max(self.max_tokens, min(BOOST_CAP, self.context_window // 2))
            self.max_tokens = min(self.max_tokens * 2, cap)
        return Retry(why)

    def _empty(
        self, reply: ModelResponse, earlier: str, housekeeping_only: bool, after_tools: bool
    ) -> Verdict:
        if earlier.strip() and housekeeping_only:
            return Answer(earlier)
        if after_tools and not self.nudged:
            self.nudged = True
            return Nudge()
        thinking = any(isinstance(b, ThinkingBlock) for b in reply.message.content)
        if thinking and self.prefills < PREFILLS:
            self.prefills += 1
            return Feed()
        spent = reply.usage.output_tokens
        deterministic = self._last_empty is not None and self._last_empty == spent
        expensive = spent >= self.max_tokens // 2
        self._last_empty = spent
        if self.empties < EMPTY_RETRIES and not deterministic and not expensive:
            self.empties += 1
            return Retry("the reply was empty")
        fallback = next((m for m in self.fallback_models if m != self.model), None)
        if fallback is not None and not self.fallback_tried:
            self.fallback_tried = True
            self.model = fallback
            return Retry(f"the reply was empty: asking {fallback}")
        return Accept()


def _looping(text: str) -> bool:
    return len(text) >= MIN_CHARS and is_repetition_dominated(text)
