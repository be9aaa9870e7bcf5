"""The kanban board (issue 27; seeds #224, #225, #230, #235, #259, #260).

| module | one job |
|---|---|
| ``cards.py`` | a card's fields, statuses and moves, with precise errors |
| ``requests.py`` | the board's mailbox |
| ``board.py`` | ``Board``: owns the cards, dispatches todo cards to workers, auto-decomposes |
| ``worker.py`` | one card's run: rounds, the stop nudge, the goal-mode judge loop |
| ``tool.py`` | the worker's ``kanban_complete`` / ``kanban_request_review`` / ``kanban_block`` |
| ``aux.py`` | specify and decompose: one auxiliary-model call each, parsed |
| ``triage.py`` | the board's specify and decompose work, in tasks (the mailbox stays free) |
| ``session.py`` | ``HandleWorker``: a worker session over a ``SessionHandle`` |
| ``client.py`` | ``KanbanClient`` and ``kanban_tree`` (the daemon's ``kanban`` child) |

The rows live in ``hermes/store/kanban_queries.py``; the daemon's opener of
worker sessions in ``hermes/daemon/kanban_runner.py``. See docs/kanban.md.
"""

from .board import ESTOP_DETAIL, Board, BoardDeps, Locate
from .cards import CardError, CardNotFound
from .client import KanbanClient, kanban_tree
from .requests import (
    AddCard,
    BlockCard,
    DecomposeCard,
    EditCard,
    GetCard,
    Handoff,
    KanbanFailed,
    ListCards,
    MoveCard,
    RemoveCard,
    RunCard,
    SpecifyCard,
    UnblockCard,
    Wake,
)
from .session import HandleWorker
from .settings import KanbanSettings
from .worker import STOP_NUDGES, OpenWorker, Reply, WorkerSession

__all__ = [
    "ESTOP_DETAIL",
    "STOP_NUDGES",
    "AddCard",
    "BlockCard",
    "Board",
    "BoardDeps",
    "CardError",
    "CardNotFound",
    "DecomposeCard",
    "EditCard",
    "GetCard",
    "HandleWorker",
    "Handoff",
    "KanbanClient",
    "KanbanFailed",
    "KanbanSettings",
    "ListCards",
    "Locate",
    "MoveCard",
    "OpenWorker",
    "RemoveCard",
    "Reply",
    "RunCard",
    "SpecifyCard",
    "UnblockCard",
    "Wake",
    "WorkerSession",
    "kanban_tree",
]
