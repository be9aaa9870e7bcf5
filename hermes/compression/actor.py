"""The compressor: one summary call on the auxiliary model, as a one-shot task.

The owner of the transcript (the running turn, or the session for an idle
``/compress``) spawns a ``Compressor`` task (``actors.Task``) as its child for
each compaction that needs a model summary and awaits its ``SummaryResult``
with ``result()``; returning it ends the task. Because it is a child, a hard
cancel of the turn or the session cancels the summary call (the transcript is
not touched until the owner commits), and an operator can cancel it by path
like any actor. It never raises for a failed summary: a model error, a
timeout, a reply cut at its output limit or garbage comes back as
``SummaryResult.error`` with its class (``failures.py``), and the owner
retries on the main model, aborts or uses the static summary.
"""

from __future__ import annotations

import attrs
import trio

from actors import MailboxConfig, Overflow, Task
from hermes.model import Message, ModelClient, ModelError, ModelRequest, TextBlock, Usage

from .failures import SummaryFailure, model_failure
from .settings import CompressionSettings
from .summary import SUMMARY_SYSTEM, GarbageSummary, accept_summary


@attrs.frozen(slots=True)
class SummaryResult:
    """The accepted summary text, or why there is none (then the static summary is used)."""

    text: str | None
    error: str | None = None
    usage: Usage = attrs.field(factory=Usage)
    """What the call cost (also when its answer was unusable)."""
    failure: SummaryFailure | None = None
    """The class of the failure (``None`` with a text); ``ERROR`` when not given."""
    model: str = ""
    """The model the call went to."""

    @property
    def failed_as(self) -> SummaryFailure:
        return self.failure or SummaryFailure.ERROR


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
        timeout, model = self.settings.summary_timeout, self.model
        with trio.move_on_after(timeout):
            try:
                response = await self.client.complete(request)
            except ModelError as error:
                failure = model_failure(error.reason)
                return SummaryResult(
                    None, f"the summary call failed: {error}", failure=failure, model=model
                )
            usage = response.usage
            if response.stop_reason == "max_tokens":
                why = f"the summary was cut at its output limit of {self.max_tokens:,} tokens"
                return SummaryResult(None, why, usage, SummaryFailure.TRUNCATED, model)
            try:
                text = accept_summary(response.message.text(), self.settings)
            except GarbageSummary as garbage:
                failure = SummaryFailure.EMPTY if garbage.empty else SummaryFailure.GARBAGE
                why = f"the summary was unusable: {garbage}"
                return SummaryResult(None, why, usage, failure, model)
            return SummaryResult(text, usage=usage, model=model)
        why = f"the summary call took longer than {timeout:g} s"
        return SummaryResult(None, why, failure=SummaryFailure.TIMEOUT, model=model)
