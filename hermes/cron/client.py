"""``CronClient``: typed calls to the scheduler; ``cron_tree``: the daemon's ``cron`` child."""

from __future__ import annotations

from typing import Any, TypeVar

from actors import Call, CallTarget
from supervisors import ChildSpec, Restart, Strategy, Supervisor, SupervisorFlags

from .requests import CronFailed
from .scheduler import Locate, Scheduler

T = TypeVar("T")

RUN_SHUTDOWN = 20.0
"""The scheduler's stop budget: its runs' sessions are cancelled and their outcomes recorded."""


class CronClient:
    """Calls to the scheduler; a ``CronFailed`` answer is raised."""

    def __init__(self, target: CallTarget, timeout: float = 15.0) -> None:
        self.target = target
        self.timeout = timeout

    async def call(self, message: Call[T | CronFailed], timeout: float | None = None) -> T:
        answer: Any = await self.target.call(message, timeout=timeout or self.timeout)
        if isinstance(answer, CronFailed):
            raise answer.error
        return answer  # type: ignore[no-any-return]


def cron_tree(locate: Locate) -> Supervisor:
    """``cron`` (one_for_one) -> ``scheduler``: restarted after a crash, jobs reloaded."""
    return Supervisor(
        [
            ChildSpec(
                "scheduler",
                Scheduler,
                args=(locate,),
                restart=Restart.PERMANENT,
                shutdown=RUN_SHUTDOWN,
            )
        ],
        SupervisorFlags(strategy=Strategy.ONE_FOR_ONE, intensity=5, period=60.0),
    )
