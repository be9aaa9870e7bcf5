"""The reviewer: one background review as a one-shot task, cancellable at any await.

A session spawns a ``Reviewer`` task (``actors.Task``) as its child when a
review is due: of memory after every N completed user turns
(``ReviewSettings.interval``), of skills after N tool-calling iterations
(``skill_interval``, seed #262), of both at once when both are due; it kills
it the moment new input or a control verb arrives. The review replays the session's transcript (same
model, same system prompt and tool list, so the cached prefix is reused; a
different model gets a digest of the tail instead), asks the review question,
and loops over model calls and memory-tool calls within its iteration and
token budgets.

Its writes go to drafts: a ``MemoryDraft`` (adds are kept, replace and remove
become proposals a person approves later, ``docs/memory.md``; in a review the
person asked for with ``/refine``, ``attended``, they are kept too) and a
``SkillDraft`` (create, edit, patch and supporting files; with ``[skills]
write_approval`` its commit stages them for the person, seed #265). Only a
review that finishes commits the drafts, in one shielded step (in a thread, so a
held file lock does not stall the loop); a
cancelled or failed review commits nothing, so it leaves no partial writes.
The outcome is the task's result; what each model call cost is also sent, as it
finishes, down the ``spent`` channel whose receive end its owner holds (bounded
at ``max_iterations``: one value a call, never blocking), so the cost of a
review killed midway is known too.
No person attends a review: the tool context has no approval callback, so a
dangerous command would be denied (only the memory and skill tools run anyway).
"""

from __future__ import annotations

from pathlib import Path

import attrs
import trio

from actors import MailboxConfig, Overflow, Task
from hermes.memory import CommitReport, MemoryDraft, MemoryService, MemoryStore, MemoryTool
from hermes.model import (
    Message,
    ModelClient,
    ModelError,
    ModelRequest,
    TextBlock,
    ToolSpec,
    Usage,
)
from hermes.skills import (
    SkillDraft,
    SkillDraftReport,
    SkillLibrary,
    SkillManageTool,
    SkillViewTool,
    SkillWriter,
)
from hermes.tools import ApprovalSession, Tool, ToolCall, ToolContext, ToolRegistry, run_batch

from .prompt import review_messages, review_prompt
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
    memory: bool = True
    """Memory is due for review (the memory tool is offered)."""
    skills: bool = False
    """Skills are due for review (skill_view and skill_manage are offered)."""
    focus: str = ""
    """What the person asked the review to look at (``/refine focus``), given priority."""
    attended: bool = False
    """The person asked for it (``/refine``, seed #274): its memory replacements and
    removals are written when it completes, not staged as proposals."""


def spent_channel(
    settings: ReviewSettings,
) -> tuple[trio.MemorySendChannel[Usage], trio.MemoryReceiveChannel[Usage]]:
    """The channel a reviewer reports each model call's cost down: the send end is the
    reviewer's, the receive end its owner's (room for every call it may make)."""
    return trio.open_memory_channel[Usage](max(1, settings.max_iterations))


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
    skills: SkillDraftReport | None = None
    """What the skill draft's commit did (None: skills were not reviewed). ``added`` and
    ``staged`` count its written and staged skills too."""


class Reviewer(Task[ReviewOutcome]):
    """Runs one review; its result is how it ended (see the module docstring)."""

    mailbox = MailboxConfig(capacity=1, overflow=Overflow.FAIL)
    shutdown_budget = 0.0  # nothing to save on a stop: the draft is simply dropped

    def __init__(
        self,
        job: ReviewJob,
        client: ModelClient,
        memory: MemoryStore | None,
        settings: ReviewSettings,
        spent: trio.MemorySendChannel[Usage] | None = None,
        skills: SkillLibrary | None = None,
    ) -> None:
        """``memory`` and ``skills``: what there is to review (each only when the job says
        it is due); ``spent``: where each model call's cost goes as it finishes
        (``spent_channel``)."""
        self.job = job
        self.client = client
        self.memory = memory if job.memory else None
        self.skills = skills if job.skills else None
        self.settings = settings
        self.spent = spent
        self.usage = Usage()
        """What its finished model calls cost (its own running total)."""
        self.memory_draft = (
            MemoryDraft(self.memory, attended=job.attended) if self.memory is not None else None
        )
        self.skill_draft = (
            SkillDraft(SkillWriter(self.skills.user_dir), stage=self.skills.write_approval)
            if self.skills is not None
            else None
        )
        tools: list[Tool] = []
        if self.memory is not None:
            tools.append(MemoryTool(self.memory.limits))
        if self.skills is not None:
            viewer = SkillViewTool(self.skills, record_uses=False)  # a read is not a use
            tools += [viewer, SkillManageTool(self.skills, self.skill_draft)]
        self.registry = ToolRegistry(tools)

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
            tools=tuple(tool.spec() for tool in self.registry),
        )

    async def _review(self) -> ReviewOutcome:
        job, settings = self.job, self.settings
        other_model = settings.model is not None and settings.model != job.model
        digest = settings.digest_messages if other_model else None
        ask = review_prompt(
            memory=self.memory is not None,
            skills=self.skills is not None,
            focus=job.focus,
            attended=job.attended,
        )
        messages = list(review_messages(job.transcript, digest=digest, ask=ask))
        registry = self.registry
        services = {MemoryService: self.memory_draft} if self.memory_draft is not None else {}
        tools_ctx = ToolContext.create(
            job.cwd,
            job.spill_dir,
            environ={},
            services=services,
            approvals=ApprovalSession(yolo=False),
        )
        iterations = tokens = 0
        end = "max_iterations"
        while iterations < settings.max_iterations:
            self.ctx.beat(f"review call {iterations + 1}")
            try:
                response = await self.client.complete(self._request(messages))
            except ModelError as error:  # nothing is committed: as if cancelled
                usage = self.usage
                return ReviewOutcome("failed", 0, 0, str(error), iterations, tokens, usage)
            iterations += 1
            self.usage = self.usage + response.usage
            if self.spent is not None:
                self.spent.send_nowait(response.usage)  # room for every call: never full
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
            memory, skills = await trio.to_thread.run_sync(self._commit)
        added = len(memory.added) + len(memory.edited) if memory is not None else 0
        staged = len(memory.proposed) if memory is not None else 0
        details = [memory.summary()] if memory is not None else []
        if skills is not None:
            added += len(skills.written)
            staged += len(skills.staged)
            details.append(skills.summary())
        return ReviewOutcome(
            end, added, staged, "\n".join(details), iterations, tokens, self.usage, skills
        )

    def _commit(self) -> tuple[CommitReport | None, SkillDraftReport | None]:
        """Both drafts, memory first (blocking: run in a thread)."""
        session_id = self.job.session_id
        memory = self.memory_draft.commit(session_id) if self.memory_draft is not None else None
        skills = (
            self.skill_draft.commit(f"review of session {session_id}")
            if self.skill_draft is not None
            else None
        )
        return memory, skills
