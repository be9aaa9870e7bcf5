"""``KanbanClient``: typed calls to the board; ``kanban_tree``: the daemon's ``kanban`` child."""

from __future__ import annotations

from typing import Any, TypeVar

from actors import Call, CallTarget
from supervisors import ChildSpec, Restart, Strategy, Supervisor, SupervisorFlags

from .board import Board, Locate
from .requests import KanbanFailed

T = TypeVar("T")

RUN_SHUTDOWN = 20.0
"""The board's stop budget: its workers' sessions are closed."""


class KanbanClient:
    """Calls to the board; a ``KanbanFailed`` answer is raised."""

    def __init__(self, target: CallTarget, timeout: float = 90.0) -> None:
        self.target = target
        self.timeout = timeout

    async def call(self, message: Call[T | KanbanFailed], timeout: float | None = None) -> T:
        answer: Any = await self.target.call(message, timeout=timeout or self.timeout)
        if isinstance(answer, KanbanFailed):
            raise answer.error
        return answer  # type: ignore[no-any-return]


def kanban_tree(locate: Locate) -> Supervisor:
    """``kanban`` (one_for_one) -> ``board``: restarted after a crash, cards reloaded."""
    return Supervisor(
        [
            ChildSpec(
                "board", Board, args=(locate,), restart=Restart.PERMANENT, shutdown=RUN_SHUTDOWN
            )
        ],
        SupervisorFlags(strategy=Strategy.ONE_FOR_ONE, intensity=5, period=60.0),
    )
