"""Stop gates: what a turn's final answer passes before the turn ends (issue 27, item 6).

The stall guard (seed #236, on by default), verify-on-stop (seed #228, off by
default) and late checker verdicts (seed #239, a hook point a tool fills
through the ``LateChecks`` service; ``checkers.py`` fills it with the commands
of ``[session] late_checks``, off unless configured). ``StopGates`` runs them for one turn; see
``docs/goals.md``.
"""

from .gates import Nudge, StopGates, StopNudged
from .late import LateChecks, LateChecksFull, Ticket, Verdict
from .settings import StopSettings
from .stall import announces_next_step
from .verify import unverified_edits

__all__ = [
    "LateChecks",
    "LateChecksFull",
    "Nudge",
    "StopGates",
    "StopNudged",
    "StopSettings",
    "Ticket",
    "Verdict",
    "announces_next_step",
    "unverified_edits",
]
