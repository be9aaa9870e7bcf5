"""When a session runs a background review, and how it is stopped.

``ReviewHost`` belongs to the session actor. After every ``interval``
completed user turns (not interrupted, cancelled or failed; compaction jobs
and machine input do not count), with nothing queued, it spawns a
``ReviewerActor`` child on a snapshot of the transcript. At most one runs.
A review that is due but cannot start (input is already waiting) stays due
and runs after the next completed user turn. Any new input or control verb
kills it at once (``cancel``), before the session does anything else: the
review never competes with a live turn.
"""

from __future__ import annotations

from pathlib import Path

import trio

from actors import ActorContext, ActorRef, Down, MonitorRef
from hermes.memory import MemoryStore
from hermes.model import Message, ModelClient, TextBlock, ToolSpec
from hermes.review import ReviewerActor, ReviewJob, ReviewSettings, StartReview

from . import events as ev

REVIEWER_NAME = "reviewer"


class ReviewHost:
    """See the module docstring."""

    def __init__(
        self,
        settings: ReviewSettings,
        memory: MemoryStore | None,
        client: ModelClient,
        hub: ev.EventHub,
    ) -> None:
        self.settings = settings
        self.memory = memory
        self.client = client
        self.hub = hub
        self.user_turns = 0
        self.unreviewed = 0
        """Completed user turns since the last review started (a due review that could
        not start, because input was already waiting, stays due)."""
        self._running: tuple[ReviewerActor, ActorRef, MonitorRef] | None = None

    @property
    def running(self) -> bool:
        return self._running is not None

    @property
    def path(self) -> str | None:
        return self._running[1].path if self._running is not None else None

    def turn_completed(self) -> bool:
        """Count a completed user turn; whether a review is due now."""
        self.user_turns += 1
        self.unreviewed += 1
        return (
            self.settings.enabled
            and self.memory is not None
            and self._running is None
            and self.unreviewed >= self.settings.interval
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
    ) -> None:
        """Spawn the reviewer on this snapshot of the session."""
        assert self.memory is not None and self._running is None
        self.unreviewed = 0
        job = ReviewJob(session_id, turn, model, system, tools, transcript, cwd, spill_dir)
        actor = ReviewerActor(job, self.client, self.memory, self.settings)
        ref = await ctx.spawn(actor, name=REVIEWER_NAME, shutdown=0)
        self._running = (actor, ref, ctx.monitor(ref))
        self.hub.publish(ev.ReviewStarted(turn))
        await ref.cast(StartReview())

    async def cancel(self, ctx: ActorContext, reason: str) -> bool:
        """Kill the running review (its draft is dropped); whether one was cut short.

        A review that had already finished (its exit notice not handled yet) is
        reported as it ended: its draft was committed.
        """
        running, self._running = self._running, None
        if running is None:
            return False
        actor, ref, monitor = running
        ctx.demonitor(monitor, flush=True)
        with trio.CancelScope(shield=True):
            await ref.kill()
        if actor.outcome is not None:  # it had finished (and committed) before the kill
            self._report(actor, actor.outcome.end, actor.outcome.detail)
            return False
        self._report(actor, "cancelled", reason)
        return True

    def on_down(self, ctx: ActorContext, down: Down) -> bool:
        """The reviewer exited by itself: report how; whether ``down`` was about it."""
        running = self._running
        if running is None or down.monitor != running[2]:
            return False
        self._running = None
        actor = running[0]
        if actor.outcome is None:
            self._report(actor, "failed", f"the reviewer crashed: {down.reason.describe()}")
        else:
            self._report(actor, actor.outcome.end, actor.outcome.detail)
        return True

    def _report(self, actor: ReviewerActor, outcome: str, detail: str) -> None:
        done = actor.outcome
        added, staged = (done.added, done.staged) if done is not None else (0, 0)
        self.hub.publish(ev.ReviewCompleted(actor.job.turn, outcome, added, staged, detail))
