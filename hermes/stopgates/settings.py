"""Which stop gates a session's turns pass through (``[session] stall_guard``,
``verify_on_stop``, ``late_checks``, ``late_check_timeout``)."""

from __future__ import annotations

import attrs

STALL_NUDGES = 1
"""Nudges the stall guard sends per turn (the issue's one; Hermes shares two with its
other continuation guards)."""
VERIFY_NUDGES = 1
"""Times a turn's answer is sent back for want of verification evidence."""
LATE_NUDGES = 3
"""Times a turn's answer is sent back for late checker verdicts (seed #239)."""
LATE_WAIT = 5.0
"""Seconds the final answer waits for checks still running (seed #239)."""


@attrs.frozen(slots=True, kw_only=True)
class StopSettings:
    stall_guard: bool = True
    """A short reply announcing a next step without a tool call gets a nudge (seed #236)."""
    verify_on_stop: bool = False
    """A turn that edited code must show a passing check after its last edit (seed #228)."""
    late_wait: float = LATE_WAIT
    late_checks: tuple[str, ...] = ()
    """Checker commands run at a final answer on the code files the turn edited
    (``{files}``: their quoted paths; ``checkers.py``). Empty: none."""
    late_check_timeout: float = 60.0
    """Seconds each checker command may run before it is killed and given up on."""
