"""What the goal keeper needs of its session, as values and callbacks (no import of it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from actors import ActorContext, Down, ExitReason, TaskCancelled, TaskFailed, TaskRef

from .evaluate import Evaluation, Job, Outcome
from .settings import GoalSettings

if TYPE_CHECKING:
    from hermes.model.client import ModelClient
    from hermes.processes import ProcessService

Delivered = Callable[[], Awaitable[None]]
Send = Callable[[str, str, Delivered | None], Awaitable[None]]
"""``send(source, text, on_delivered)``: machine input for the session (it starts a turn
when idle, else waits its turn); ``on_delivered`` runs once a turn took it."""


@attrs.frozen(slots=True, kw_only=True)
class GoalHost:
    ctx: ActorContext
    client: ModelClient
    model: str
    """The judge's model."""
    settings: GoalSettings
    cwd: Path
    env: Mapping[str, str]
    publish: Callable[[object], object]
    send: Send
    turn_number: Callable[[], int]
    """The running turn's number, or the last one's when idle."""
    busy: Callable[[], bool]
    """A turn runs or input waits."""
    attended: bool = True
    """A person drives this session: only then may gates (shell commands) be added."""
    save: Callable[[str | None], Awaitable[None]] | None = None
    """Keep the goal and loop's state (``persist.dump``) where a restart finds it."""
    processes: ProcessService | None = None
    """The session's background processes: the judge sees the running ones, and a
    ``wait`` on one of them parks the goal until it ends (``barrier.py``)."""

    def stopped(self) -> bool:
        """The emergency stop is on (its file exists)."""
        estop = self.settings.estop_file
        return estop is not None and estop.exists()


ESTOP_RECHECK = 60.0
"""Seconds between two looks at the emergency stop by a wakeup or continuation it holds."""


class Slot:
    """At most one evaluation task of one kind (the goal's, or the loop's)."""

    def __init__(self, host: GoalHost, name: str) -> None:
        self.host = host
        self.name = name
        self.job: Job | None = None
        self._ref: TaskRef[Outcome] | None = None
        self._monitor: object | None = None

    @property
    def running(self) -> bool:
        return self._ref is not None

    async def start(self, job: Job) -> None:
        """Evaluate ``job`` (killing an evaluation still running)."""
        await self.stop()
        host = self.host
        task = Evaluation(
            job,
            client=host.client,
            model=host.model,
            timeout=host.settings.judge_timeout,
            cwd=host.cwd,
            env=host.env,
            processes=host.processes,
        )
        ref = await host.ctx.spawn_task(task, name=self.name, shutdown=0, link=False)
        self._ref, self.job, self._monitor = ref, job, host.ctx.monitor(ref)

    def owns(self, down: Down) -> bool:
        return self._monitor is not None and down.monitor == self._monitor

    async def outcome(self) -> tuple[Job, Outcome | ExitReason]:
        """The ended task's job and value (or why it gave none); the slot is free again."""
        ref, job = self._ref, self.job
        assert ref is not None and job is not None
        self._ref = self.job = self._monitor = None
        try:
            return job, await ref.result()
        except (TaskFailed, TaskCancelled) as error:
            return job, error.reason

    async def stop(self) -> None:
        ref, monitor = self._ref, self._monitor
        self._ref = self.job = self._monitor = None
        if ref is not None:
            if monitor is not None:
                self.host.ctx.demonitor(monitor, flush=True)  # type: ignore[arg-type]
            await ref.kill()
