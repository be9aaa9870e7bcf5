"""The board's settings (``[kanban]`` of the configuration, and the goal judge's)."""

from __future__ import annotations

from pathlib import Path

import attrs


@attrs.frozen(slots=True, kw_only=True)
class KanbanSettings:
    dispatch: bool = True
    """The daemon's dispatcher hands todo cards to workers on its own (Hermes'
    ``kanban.dispatch_in_gateway: true``); off, only ``kanban run`` starts one."""
    auto_decompose: bool = True
    """Each dispatch pass splits triage cards into subcards with no person involved (#259)."""
    auto_decompose_per_tick: int = 3
    max_running: int = 3
    """Workers running at once (a card past it waits for a free one)."""
    stop_nudge: bool = True
    """A worker that ends without completing, blocking or handing off its card is sent
    back, at most ``STOP_NUDGES`` times (#230; Hermes' HERMES_KANBAN_STOP_NUDGE)."""
    goal_max_turns: int = 20
    """A goal-mode card's rounds before it is blocked (``[goals] max_turns``)."""
    worker_timeout: float = 600.0
    """Seconds without activity before a worker's turn is cut off (0: no limit)."""
    aux_model: str = ""
    """The model of specify, decompose and the goal judge ('' = the caller's default)."""
    aux_timeout: float = 60.0
    estop: Path | None = None
    """The emergency stop's file (``hermes pause``, seed #218)."""

    def stopped(self) -> bool:
        return self.estop is not None and self.estop.exists()
