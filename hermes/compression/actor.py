"""The compressor: one summary call on the auxiliary model, as a one-shot task.

The owner of the transcript (the running turn, or the session for an idle
``/compress``) spawns a ``Compressor`` task (``actors.Task``) as its child for
each compaction that needs a model summary and awaits its ``SummaryResult``
with ``result()``; returning it ends the task. Because it is a child, a hard
cancel of the turn or the session cancels the summary call (the transcript is
not touched until the owner commits), and an operator can cancel it by path
like any actor. It never raises for a failed summary: a model error, a
timeout or garbage comes back as ``SummaryResult.error`` and the owner uses
the static summary instead.
"""

from __future__ import annotations

import attrs
import trio

from actors import MailboxConfig, Overflow, Task
from hermes.model import Message, ModelClient, ModelError, ModelRequest, TextBlock, Usage

from .settings import CompressionSettings
from .summary import SUMMARY_SYSTEM, GarbageSummary, accept_summary


@attrs.frozen(slots=True)
class SummaryResult:
    """The accepted summary text, or why there is none (then the static summary is used)."""

    text: str | None
    error: str | None = None
    usage: Usage = attrs.field(factory=Usage)
    """What the call cost (also when its answer was unusable)."""


class Compressor(Task[SummaryResult]):
    """Makes one summary call of ``prompt`` (see the module docstring)."""

    mailbox = MailboxConfig(capacity=1, overflow=Overflow.FAIL)

    def __init__(
        self,
        client: ModelClient,
        model: str,
        max_tokens: int,
        settings: CompressionSettings,
        prompt: str,
    ) -> None:
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.settings = settings
        self.prompt = prompt

    async def run(self) -> SummaryResult:
        self.ctx.beat(f"summarising with {self.model}")
        return await self._summarise(self.prompt)

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
