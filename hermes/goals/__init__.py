"""Standing goals and loops: ``/goal``, ``/subgoal``, ``/loop`` (issue 27, items 5).

A session owns one ``GoalKeeper`` (``keeper.py``). After each turn that counts
toward its goal, an evaluation task (``evaluate.py``) runs the goal's quality
gates (``gates.py``) and then the judge, a short structured call to the
auxiliary model (``judge.py``); the keeper decides from its verdict whether to
continue (the next turn starts with the judge's note, as machine input), end,
pause or wait (on a timer, or on a background process or pid the judge named
until it ends: ``barrier.py``). ``/loop`` wakes the session on a cadence until the agent replies
``LOOP_COMPLETE``, a ``--until`` judge rules the condition met, or its count
runs out (``loop.py``, ``looper.py``). The slash grammar and the commands every
surface builds are in ``commands.py``. See ``docs/goals.md``.
"""

from .commands import (
    Command,
    GateCommand,
    GoalAnswer,
    GoalCall,
    GoalVerb,
    LoopVerb,
    SetGoal,
    SetLoop,
    SubgoalCommand,
    is_slash,
    parse_slash,
)
from .events import GoalReplied, GoalUpdated, LoopUpdated
from .host import GoalHost
from .judge import Judged, Verdict, judge_goal
from .keeper import GoalKeeper, GoalWake
from .loop import LOOP_COMPLETE, LoopSpec, parse_loop
from .looper import LoopTick
from .record import Contract, Gate, Goal, GoalError, GoalStatus, parse_contract
from .settings import GoalSettings

GoalSignal = (GoalWake, LoopTick)
"""The keeper's timer messages (the session hands them to ``GoalKeeper.signal``)."""

__all__ = [
    "LOOP_COMPLETE",
    "Command",
    "Contract",
    "Gate",
    "GateCommand",
    "Goal",
    "GoalAnswer",
    "GoalCall",
    "GoalError",
    "GoalHost",
    "GoalKeeper",
    "GoalReplied",
    "GoalSettings",
    "GoalSignal",
    "GoalStatus",
    "GoalUpdated",
    "GoalVerb",
    "GoalWake",
    "Judged",
    "LoopSpec",
    "LoopTick",
    "LoopUpdated",
    "LoopVerb",
    "SetGoal",
    "SetLoop",
    "SubgoalCommand",
    "Verdict",
    "is_slash",
    "judge_goal",
    "parse_contract",
    "parse_loop",
    "parse_slash",
]
