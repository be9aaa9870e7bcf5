"""Goal and loop settings (``[goals]`` and ``[loops]`` of the configuration)."""

from __future__ import annotations

from pathlib import Path

import attrs

from hermes.checks import at_least

LABEL = "goal settings"


@attrs.frozen(slots=True, kw_only=True)
class GoalSettings:
    max_turns: int = attrs.field(default=20, validator=at_least(LABEL, 1))
    """A new goal's turn budget (``/goal --turns N`` sets another)."""
    judge_model: str = ""
    """The judge's model ('' = the session's)."""
    judge_timeout: float = attrs.field(default=30.0, validator=at_least(LABEL, 0.001))
    gate_timeout: float = attrs.field(default=300.0, validator=at_least(LABEL, 0.001))
    gate_retries: int = attrs.field(default=3, validator=at_least(LABEL, 0))
    loop_min_interval: float = attrs.field(default=30.0, validator=at_least(LABEL, 0.001))
    loop_max_ticks: int = attrs.field(default=100, validator=at_least(LABEL, 0))
    """Wakeups before a loop pauses (0: no limit)."""
    estop_file: Path | None = None
    """The emergency stop's file (``hermes pause``, seed #218): while it exists no loop
    wakeup or goal continuation starts a turn; they wait and go on after ``hermes resume``."""
