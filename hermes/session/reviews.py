"""When a session runs a background review, and how it is stopped.

``ReviewHost`` belongs to the session actor. After every ``interval``
completed user turns (not interrupted, cancelled or failed; compaction jobs
and machine input do not count) memory is due; once ``skill_interval``
tool-calling iterations ran since the last skill review or ``skill_manage``
call, skills are (seed #262). After a completed user turn with either due and
nothing queued, it spawns a ``Reviewer`` task child on a snapshot of the
transcript, reviewing what is due. At most one runs.
A review that is due but cannot start (input is already waiting) stays due
and runs after the next completed user turn. Any new input or control verb
kills it at once (``cancel``), before the session does anything else: the
review never competes with a live turn. The reviewer is a ``TaskChild``
(temporary, brutal, unlinked: its crash is reported as a failed review, the
session goes on). How it ended comes back as the task's result; what it
cost, from the receive end of its ``spent`` channel (``hermes.review.spent_channel``:
one value per finished model call, sent by the reviewer, read here once it has
exited, so a killed review is charged too). Nothing is lent to it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import attrs
import trio

from actors import ActorContext, Down, ExitKind, Timer
from hermes.memory import MemoryStore
from hermes.model import Message, ModelClient, TextBlock, ToolSpec, Usage
from hermes.review import Reviewer, ReviewJob, ReviewOutcome, ReviewSettings, spent_channel
from hermes.skills import SkillLibrary
from hermes.store import StoreError

from . import events as ev
from .task_child import TaskChild

REVIEWER_NAME = "reviewer"


@attrs.frozen(slots=True)
class ReviewDue:
    """The session stayed idle for the review's idle delay (a timer message)."""

    turn: int


CHARGE_TIMEOUT = 5.0
"""Bound on recording a review's token usage."""

log = logging.getLogger(__name__)


@attrs.frozen(slots=True)
class _Review:
    """The review running now."""

    job: ReviewJob
    spent: trio.MemoryReceiveChannel[Usage]
    """What each of its finished model calls cost (read once it has exited)."""
    task: TaskChild[ReviewOutcome]

    def cost(self) -> Usage:
        """The sum of what it reported, however it ended (the channel is then closed)."""
        total = Usage()
        while True:
            try:
                total = total + self.spent.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
        self.spent.close()
        return total


class ReviewHost:
    """See the module docstring."""

    def __init__(
        self,
        settings: ReviewSettings,
        memory: MemoryStore | None,
        client: ModelClient,
        hub: ev.EventHub,
        charge: Callable[[Usage], Awaitable[object]] | None = None,
        skills: SkillLibrary | None = None,
    ) -> None:
        """``charge`` adds a review's token usage to the session's (the store's ``add_usage``);
        ``skills``: the library behind the session's skill_manage (None: no skill reviews)."""
        self.settings = settings
        self.charge = charge
        self.memory = memory
        self.skills = skills
        self.tool_iterations = 0
        """Tool-calling iterations since the last skill review or skill_manage call."""
        self.client = client
        self.hub = hub
        self.user_turns = 0
        self.unreviewed = 0
        """Completed user turns since the last review started or the agent wrote memory
        itself (a due review that could not start, because input was already waiting,
        stays due)."""
        self._memory_written = False
        """The turn just ended called the memory tool (``count_tools``)."""
        self._running: _Review | None = None
        self._timer: Timer | None = None
        """The idle delay of a due review (cancelled by any new input)."""

    @property
    def running(self) -> bool:
        return self._running is not None

    @property
    def path(self) -> str | None:
        return self._running.task.path if self._running is not None else None

    @property
    def reviewable(self) -> bool:
        """There is something to review (memory, skills): ``/refine`` may run."""
        return self.memory is not None or self.skills is not None

    def count_tools(self, iterations: int, messages: Sequence[Message]) -> None:
        """Count an ended turn's tool-calling iterations; ``messages`` (the turn's) calling
        skill_manage start the count again (seed #262), calling memory the count of user
        turns (seed #261)."""
        names = {use.name for m in messages if m.role == "assistant" for use in m.tool_uses()}
        self._memory_written = self.memory is not None and "memory" in names
        if self._memory_written:
            self.unreviewed = 0
        if self.skills is None:
            return
        used = "skill_manage" in names
        self.tool_iterations = 0 if used else self.tool_iterations + iterations

    def resume(self, messages: Sequence[Message]) -> None:
        """A resumed session counts from its earlier user turns (seed #261): the user
        messages that begin with text (tool results, and steers after them, do not)."""
        earlier = sum(
            1
            for m in messages
            if m.role == "user" and m.content and isinstance(m.content[0], TextBlock)
        )
        self.user_turns = self.unreviewed = earlier

    def _memory_due(self) -> bool:
        return self.memory is not None and self.unreviewed >= self.settings.interval

    def _skills_due(self) -> bool:
        interval = self.settings.skill_interval
        return self.skills is not None and interval > 0 and self.tool_iterations >= interval

    def turn_completed(self) -> bool:
        """Count a completed user turn; whether a review (memory, skills) is due now.

        A turn that wrote memory itself leaves the count at 0 (seed #261)."""
        self.user_turns += 1
        if not self._memory_written:
            self.unreviewed += 1
        self._memory_written = False
        return (
            self.settings.enabled
            and self._running is None
            and (self._memory_due() or self._skills_due())
        )

    async def start(
        self,
        ctx: ActorContext,
        *,
        session_id: str,
        turn: int,
        model: str,
        system: tuple[TextBlock, ...],
        tools: tuple[ToolSpec, ...],
        transcript: tuple[Message, ...],
        cwd: Path,
        spill_dir: Path,
        thinking_budget: int | None = None,
        focus: str | None = None,
    ) -> None:
        """Spawn the reviewer on this snapshot of the session, for what is due; with
        ``focus`` (the person's ``/refine [focus]``, seed #274) for all there is."""
        assert self._running is None
        if focus is not None:
            memory, skills = self.memory is not None, self.skills is not None
        else:
            skills = self._skills_due()
            memory = self.memory is not None and (self._memory_due() or not skills)
        assert memory or skills
        if memory:
            self.unreviewed = 0
        if skills:
            self.tool_iterations = 0
        job = ReviewJob(
            session_id,
            turn,
            model,
            system,
            tools,
            transcript,
            cwd,
            spill_dir,
            thinking_budget,
            memory=memory,
            skills=skills,
            focus=focus or "",
            attended=focus is not None,
        )
        send, spent = spent_channel(self.settings)
        reviewer = Reviewer(job, self.client, self.memory, self.settings, send, self.skills)
        task = await TaskChild.start(ctx, reviewer, name=REVIEWER_NAME, monitored=True)
        self._running = _Review(job, spent, task)
        self.hub.publish(ev.ReviewStarted(turn))

    def schedule(self, ctx: ActorContext, turn: int) -> bool:
        """Arm the idle delay of a due review (``ReviewDue`` arrives when it passes);
        False when there is no delay (start at once)."""
        if self.settings.idle_delay <= 0:
            return False
        self.disarm()
        self._timer = ctx.send_after(self.settings.idle_delay, ReviewDue(turn))
        return True

    def disarm(self) -> None:
        """New input: a review waiting for the session to go quiet waits for the next time."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def due(self, message: ReviewDue) -> bool:
        """Whether ``message`` is the live timer's (not one disarmed meanwhile)."""
        if self._timer is None:
            return False
        self._timer = None
        return True

    async def cancel(self, ctx: ActorContext, reason: str) -> bool:
        """Kill the running review (its draft is dropped); whether one was cut short.

        A review that had already finished (its exit notice not handled yet) is
        reported as it ended: its draft was committed.
        """
        self.disarm()
        running, self._running = self._running, None
        if running is None:
            return False
        ended = await running.task.stop()
        finished = isinstance(ended, ReviewOutcome)  # it had finished (and committed) first
        await self._charge(running.cost())
        if isinstance(ended, ReviewOutcome):
            self._report(running.job, ended.end, ended.detail, ended)
        else:
            self._report(running.job, "cancelled", reason)
        return not finished

    async def on_down(self, ctx: ActorContext, down: Down) -> bool:
        """The reviewer exited by itself: report how; whether ``down`` was about it.

        Killed by someone else (an operator, by path) counts as cancelled.
        """
        running = self._running
        if running is None or not running.task.is_down(down):
            return False
        self._running = None
        ended = await running.task.exited()
        await self._charge(running.cost())
        job = running.job
        if isinstance(ended, ReviewOutcome):
            self._report(job, ended.end, ended.detail, ended)
        elif down.reason.kind in (ExitKind.CANCELLED, ExitKind.KILLED):
            self._report(job, "cancelled", down.reason.describe())
        else:
            self._report(job, "failed", f"the reviewer crashed: {down.reason.describe()}")
        return True

    def _report(
        self, job: ReviewJob, outcome: str, detail: str, done: ReviewOutcome | None = None
    ) -> None:
        added, staged = (done.added, done.staged) if done is not None else (0, 0)
        self.hub.publish(ev.ReviewCompleted(job.turn, outcome, added, staged, detail))

    async def _charge(self, cost: Usage) -> None:
        """Add what the review's model calls cost to the session's usage (bounded)."""
        if self.charge is None or cost == Usage():
            return
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + CHARGE_TIMEOUT
            try:
                await self.charge(cost)
            except StoreError as error:
                log.warning("review usage not recorded: %s", error)
