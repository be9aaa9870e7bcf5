"""The reviewer: one background memory review as a one-shot task, cancellable at any await.

A session spawns a ``Reviewer`` task (``actors.Task``) as its child after every N completed
user turns (``ReviewSettings.interval``) and kills it the moment new input or
a control verb arrives. The review replays the session's transcript (same
model, same system prompt and tool list, so the cached prefix is reused; a
different model gets a digest of the tail instead), asks the review question,
and loops over model calls and memory-tool calls within its iteration and
token budgets.

Its writes go to a ``MemoryDraft``: adds are kept in the draft, replace and
remove become proposals a person approves later (``docs/memory.md``). Only a
review that finishes commits the draft, in one shielded step (in a thread, so a
held file lock does not stall the loop); a
cancelled or failed review commits nothing, so it leaves no partial writes.
The outcome is the task's result; what its model calls cost is added as they
finish to a ``ReviewCost`` its owner lends it, so it is known after a cancel too.
No person attends a review: the tool context has no approval callback, so a
dangerous command would be denied (only the memory tool runs anyway).
"""

from __future__ import annotations

from pathlib import Path

import attrs
import trio

from actors import MailboxConfig, Overflow, Task
from hermes.memory import MemoryDraft, MemoryService, MemoryStore, MemoryTool
from hermes.model import (
    Message,
    ModelClient,
    ModelError,
    ModelRequest,
    TextBlock,
    ToolSpec,
    Usage,
)
from hermes.tools import ApprovalSession, ToolCall, ToolContext, ToolRegistry, run_batch

from .prompt import review_messages
from .settings import ReviewSettings

DIGEST_SYSTEM = (
    "You review conversations for an AI agent and keep its long-term memory: durable facts "
    "about the user and their environment, and lessons about working with them."
)


@attrs.frozen(slots=True)
class ReviewJob:
    """What a review reads: a snapshot of the session at the end of a turn."""

    session_id: str
    turn: int
    model: str
    """The session's model (the review uses ``ReviewSettings.model`` if set)."""
    system: tuple[TextBlock, ...]
    tools: tuple[ToolSpec, ...]
    """The session's tool list: offered unchanged so the cached prefix holds."""
    transcript: tuple[Message, ...]
    cwd: Path
    spill_dir: Path
    thinking_budget: int | None = None
    """The session's: the same thinking settings keep the cached prefix valid."""


@attrs.define(slots=True)
class ReviewCost:
    """What a review's finished model calls cost so far; lent by its owner, who reads it
    however the review ended (a cancelled review's calls were paid for too)."""

    usage: Usage = attrs.field(factory=Usage)


@attrs.frozen(slots=True)
class ReviewOutcome:
    """How a review that was not cancelled ended."""

    end: str
    """completed, budget (tokens spent), max_iterations, or failed."""
    added: int
    staged: int
    detail: str
    iterations: int
    tokens: int
    usage: Usage = attrs.field(factory=Usage)


class Reviewer(Task[ReviewOutcome]):
    """Runs one review; its result is how it ended (see the module docstring)."""

    mailbox = MailboxConfig(capacity=1, overflow=Overflow.FAIL)
    shutdown_budget = 0.0  # nothing to save on a stop: the draft is simply dropped

    def __init__(
        self,
        job: ReviewJob,
        client: ModelClient,
        memory: MemoryStore,
        settings: ReviewSettings,
        cost: ReviewCost | None = None,
    ) -> None:
        self.job = job
        self.client = client
        self.memory = memory
        self.settings = settings
        self.cost = cost if cost is not None else ReviewCost()

    async def run(self) -> ReviewOutcome:
        return await self._review()

    def _request(self, messages: list[Message]) -> ModelRequest:
        job, settings = self.job, self.settings
        if settings.model is None or settings.model == job.model:
            thinking = job.thinking_budget
            return ModelRequest(
                model=job.model,
                messages=tuple(messages),
                max_tokens=settings.max_tokens + (thinking or 0),
                system=job.system,
                tools=job.tools,
                thinking_budget=thinking,
            )
        return ModelRequest(
            model=settings.model,
            messages=tuple(messages),
            max_tokens=settings.max_tokens,
            system=(TextBlock(DIGEST_SYSTEM),),
            tools=(MemoryTool(self.memory.limits).spec(),),
        )

    async def _review(self) -> ReviewOutcome:
        job, settings = self.job, self.settings
        other_model = settings.model is not None and settings.model != job.model
        digest = settings.digest_messages if other_model else None
        messages = list(review_messages(job.transcript, digest=digest))
        draft = MemoryDraft(self.memory)
        registry = ToolRegistry([MemoryTool(self.memory.limits)])
        tools_ctx = ToolContext.create(
            job.cwd,
            job.spill_dir,
            environ={},
            services={MemoryService: draft},
            approvals=ApprovalSession(yolo=False),
        )
        iterations = tokens = 0
        end = "max_iterations"
        while iterations < settings.max_iterations:
            self.ctx.beat(f"review call {iterations + 1}")
            try:
                response = await self.client.complete(self._request(messages))
            except ModelError as error:  # nothing is committed: as if cancelled
                usage = self.cost.usage
                return ReviewOutcome("failed", 0, 0, str(error), iterations, tokens, usage)
            iterations += 1
            self.cost.usage = self.cost.usage + response.usage
            tokens += response.usage.prompt_tokens + response.usage.output_tokens
            messages.append(response.message)
            uses = response.message.tool_uses()
            if not uses:
                end = "completed"
                break
            calls = [ToolCall.from_block(u, response.malformed_inputs.get(u.id)) for u in uses]
            results = await run_batch(calls, registry, tools_ctx)
            messages.append(Message("user", tuple(r.to_block() for r in results)))
            if tokens >= settings.token_budget:
                end = "budget"
                break
        # All or nothing, in a thread (a held file lock must not stall the loop), and
        # shielded: once it starts, the outcome is recorded even if a kill comes.
        with trio.CancelScope(shield=True):
            report = await trio.to_thread.run_sync(draft.commit, job.session_id)
        return ReviewOutcome(
            end,
            len(report.added),
            len(report.proposed),
            report.summary(),
            iterations,
            tokens,
            self.cost.usage,
        )
