"""The compressor actor: one summary call on the auxiliary model, in its own scope.

The owner of the transcript (the running turn, or the session for an idle
``/compress``) spawns a ``CompressorActor`` as its child for each compaction
that needs a model summary, calls it once with ``Summarise`` and gets a
``SummaryResult``; the actor stops itself after replying. Because it is a
child, a hard cancel of the turn or the session cancels the summary call
(the transcript is not touched until the owner commits), and an operator can
cancel it by path like any actor. It never raises for a failed summary: a
model error, a timeout or garbage comes back as ``SummaryResult.error`` and
the owner uses the static summary instead.
"""

from __future__ import annotations

import attrs
import trio

from actors import Actor, Call, MailboxConfig, Overflow
from hermes.model import Message, ModelClient, ModelError, ModelRequest, TextBlock, Usage

from .settings import CompressionSettings
from .summary import SUMMARY_SYSTEM, GarbageSummary, accept_summary


@attrs.frozen(slots=True)
class Summarise(Call["SummaryResult"]):
    """The one request a compressor handles: the summary prompt to send."""

    prompt: str


@attrs.frozen(slots=True)
class SummaryResult:
    """The accepted summary text, or why there is none (then the static summary is used)."""

    text: str | None
    error: str | None = None
    usage: Usage = attrs.field(factory=Usage)
    """What the call cost (also when its answer was unusable)."""


class CompressorActor(Actor):
    """Makes one summary call (see the module docstring)."""

    mailbox = MailboxConfig(capacity=1, overflow=Overflow.FAIL)

    def __init__(
        self, client: ModelClient, model: str, max_tokens: int, settings: CompressionSettings
    ) -> None:
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.settings = settings

    async def receive(self, message: object) -> SummaryResult:
        if not isinstance(message, Summarise):
            raise TypeError(f"a compressor handles Summarise, not {type(message).__name__}")
        self.ctx.beat(f"summarising with {self.model}")
        try:
            return await self._summarise(message.prompt)
        finally:
            self.ctx.stop()  # one summary per compressor

    async def _summarise(self, prompt: str) -> SummaryResult:
        request = ModelRequest(
            model=self.model,
            messages=(Message.user(prompt),),
            max_tokens=self.max_tokens,
            system=(TextBlock(SUMMARY_SYSTEM),),
            cache_conversation=False,  # a one-off prompt: a cache write would be wasted
        )
        timeout = self.settings.summary_timeout
        with trio.move_on_after(timeout):
            try:
                response = await self.client.complete(request)
            except ModelError as error:
                return SummaryResult(None, f"the summary call failed: {error}")
            try:
                text = accept_summary(response.message.text(), self.settings)
            except GarbageSummary as garbage:
                return SummaryResult(None, f"the summary was unusable: {garbage}", response.usage)
            return SummaryResult(text, usage=response.usage)
        return SummaryResult(None, f"the summary call took longer than {timeout:g} s")
