"""The daemon's kanban board: its store, its model, and worker sessions from the manager.

Each card's worker is a fresh session created through the sessions manager
(supervised, listed, watched and cancellable like any session), unattended as
a cron run's is (no messaging, clarify or cronjob tools: seed #118), plus the
card's own ``kanban_*`` tools. Closing it goes through the manager too.
"""

from __future__ import annotations

from collections.abc import Sequence

from actors import ActorContext
from hermes.kanban import BoardDeps, HandleWorker, KanbanSettings, Locate, WorkerSession
from hermes.store import StoreClient
from hermes.store.kanban_queries import Card
from hermes.tools import Tool

from .estop import ESTOP_FILE
from .job_tools import NEVER_IN_JOBS
from .manager import Close, Create, ManagerClient
from .providers import GetProviders
from .settings import Settings
from .siblings import siblings

CLOSE_TIMEOUT = 15.0


def kanban_settings(settings: Settings) -> KanbanSettings:
    """``[kanban]`` (and ``[goals] max_turns``, the goal-mode budget)."""
    config = settings.config
    return KanbanSettings(
        dispatch=config.get("kanban", "dispatch"),
        auto_decompose=config.get("kanban", "auto_decompose"),
        auto_decompose_per_tick=config.get("kanban", "auto_decompose_per_tick"),
        max_running=config.get("kanban", "max_running"),
        stop_nudge=config.get("kanban", "stop_nudge"),
        worker_timeout=config.get("kanban", "worker_timeout"),
        aux_model=config.get("kanban", "aux_model"),
        goal_max_turns=config.get("goals", "max_turns"),
        estop=config.data_dir(settings.paths) / ESTOP_FILE,
    )


def locate(settings: Settings) -> Locate:
    async def found(ctx: ActorContext) -> BoardDeps:
        store, sessions, providers = siblings(ctx, "kanban", "store", "sessions", "providers")
        manager = ManagerClient(sessions, view=settings.sessions_view)
        found_providers = await providers.call(GetProviders(), timeout=10.0)
        board = kanban_settings(settings)
        config = settings.config
        model = (
            board.aux_model
            or config.get("goals", "judge_model")
            or config.get("approvals", "judge_model")
            or found_providers.model
        )

        async def open_worker(card: Card, tools: Sequence[Tool]) -> WorkerSession:
            create = Create(
                title=f"kanban: {card.title}"[:200],
                without=(*NEVER_IN_JOBS, "cronjob"),
                tools=tuple(tools),
                scheduled=True,
            )
            view = await manager.call(create)
            entry = await manager.lookup(view.id)

            async def close(reason: str) -> None:
                await manager.call(Close(view.id, reason), timeout=CLOSE_TIMEOUT)

            return HandleWorker(view.id, entry.handle, close, board.worker_timeout)

        return BoardDeps(
            store=StoreClient(store, lane=settings.store_lane),
            open=open_worker,
            client=found_providers.client,
            model=model,
            settings=board,
        )

    return found
