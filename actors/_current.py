"""The actor whose task is running, as a context variable (None outside actors)."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._cell import ActorCell

current_cell: ContextVar[ActorCell | None] = ContextVar("actors.current_cell", default=None)
"""Set by each actor's task; trio copies it into the tasks an actor starts."""


def current_path() -> str | None:
    """The path of the actor whose task is running (None outside actors), e.g. for logs."""
    cell = current_cell.get()
    return cell.path if cell is not None else None
