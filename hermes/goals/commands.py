"""The goal and loop commands as values, and the slash grammar that types them.

``/goal TEXT`` (``/goal --turns N TEXT``, ``/goal draft TEXT``, ``/goal -- TEXT``
for text that starts with a control word), ``/goal`` or ``/goal status``,
``/goal pause``, ``/goal resume``, ``/goal clear``, ``/goal gate [add CMD |
remove N | clear]``; ``/subgoal [TEXT | remove N | clear]``; ``/loop ...``
(``loop.py``). Every surface builds the same commands: the session reads them
from a person's prompt, the gateway from its methods. Bad input raises
``GoalError`` naming what was wrong.
"""

from __future__ import annotations

from typing import TypeAlias

import attrs

from actors import Call

from .loop import LoopSpec, parse_loop
from .record import TEXT_LIMIT, GoalError


@attrs.frozen(slots=True, kw_only=True)
class SetGoal:
    text: str
    max_turns: int | None = None
    draft: bool = False


@attrs.frozen(slots=True)
class GoalVerb:
    """``status``, ``pause``, ``resume`` or ``clear``."""

    verb: str


@attrs.frozen(slots=True)
class GateCommand:
    """``list``, ``add`` (``command``), ``remove`` (``index``, 1-based) or ``clear``."""

    action: str
    command: str = ""
    index: int = 0


@attrs.frozen(slots=True)
class SubgoalCommand:
    """``list``, ``add`` (``text``), ``remove`` (``index``, 1-based) or ``clear``."""

    action: str
    text: str = ""
    index: int = 0


@attrs.frozen(slots=True)
class SetLoop:
    spec: LoopSpec


@attrs.frozen(slots=True)
class LoopVerb:
    """``status``, ``pause``, ``resume`` or ``stop``."""

    verb: str


Command: TypeAlias = SetGoal | GoalVerb | GateCommand | SubgoalCommand | SetLoop | LoopVerb

GOAL_VERBS = ("status", "pause", "resume", "clear")
LOOP_VERBS = ("status", "pause", "resume", "stop")
SLASH_WORDS = ("/goal", "/subgoal", "/loop")


@attrs.frozen(slots=True)
class GoalCall(Call["GoalAnswer"]):
    """A session's mailbox message: apply ``command`` (answered with a ``GoalAnswer``)."""

    command: Command


@attrs.frozen(slots=True, kw_only=True)
class GoalAnswer:
    """What a command did: a line for the person, the goal and loop now, a turn it started."""

    output: str
    goal: dict[str, object] | None = None
    loop: dict[str, object] | None = None
    turn: int | None = None
    """The turn the command started (None: none, or its input waits in the queue)."""


def checked(text: str, what: str) -> str:
    """``text`` stripped, or ``GoalError`` when it is empty or too long."""
    text = text.strip()
    if not text:
        raise GoalError(f"{what} is empty")
    if len(text) > TEXT_LIMIT:
        raise GoalError(f"{what} is {len(text)} characters, over the limit of {TEXT_LIMIT}")
    return text


def index_of(word: str, usage: str) -> int:
    if not word.isdigit() or int(word) < 1:
        raise GoalError(f"{usage}: N must be a number from 1, got {word!r}")
    return int(word)


def is_slash(text: str) -> bool:
    """Whether a prompt is one of these commands (a person's ``/goal ...``)."""
    word = text.lstrip().split(None, 1)[0] if text.strip() else ""
    return word in SLASH_WORDS


def parse_slash(text: str) -> Command:
    """The command a ``/goal``, ``/subgoal`` or ``/loop`` line means."""
    word, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    if word == "/loop":
        verb = rest.lower()
        if verb in ("", *LOOP_VERBS, "clear", "cancel"):
            return LoopVerb({"": "status", "clear": "stop", "cancel": "stop"}.get(verb, verb))
        return SetLoop(parse_loop(rest))
    if word == "/subgoal":
        return _subgoal(rest)
    if word != "/goal":
        raise GoalError(f"not a goal command: {word!r} (known: {', '.join(SLASH_WORDS)})")
    return _goal(rest)


def _goal(rest: str) -> Command:
    verb, _, tail = rest.partition(" ")
    lower, tail = verb.lower(), tail.strip()
    if lower in ("", "show"):
        return GoalVerb("status")
    if lower in GOAL_VERBS or lower == "stop":
        if tail:
            raise GoalError(
                f"/goal {lower} takes nothing after it (got {tail[:80]!r}); to set a goal that "
                f"starts with {lower!r}, use /goal -- {lower} {tail[:40]}"
            )
        return GoalVerb("clear" if lower == "stop" else lower)
    if lower == "gate":
        return _gate(tail)
    if lower == "draft":
        return SetGoal(text=checked(tail, "/goal draft: the objective"), draft=True)
    if lower == "--":
        return SetGoal(text=checked(tail, "/goal --: the goal text"))
    if lower == "--turns":
        count, _, text = tail.partition(" ")
        if not count.isdigit() or not 1 <= int(count) <= 1000:
            raise GoalError(f"/goal --turns N: N must be a number from 1 to 1000, got {count!r}")
        return SetGoal(text=checked(text, "/goal: the goal text"), max_turns=int(count))
    return SetGoal(text=checked(rest, "/goal: the goal text"))


def _gate(tail: str) -> GateCommand:
    usage = "/goal gate [add COMMAND | remove N | clear]"
    action, _, arg = tail.partition(" ")
    action, arg = action.lower(), arg.strip()
    if action in ("", "list") and not arg:
        return GateCommand("list")
    if action == "add":
        return GateCommand("add", command=checked(arg, "/goal gate add: the command"))
    if action in ("remove", "rm") and arg:
        return GateCommand("remove", index=index_of(arg, "/goal gate remove N"))
    if action == "clear" and not arg:
        return GateCommand("clear")
    raise GoalError(f"usage: {usage} (got {tail[:80]!r})")


def _subgoal(rest: str) -> SubgoalCommand:
    action, _, arg = rest.partition(" ")
    lower, arg = action.lower(), arg.strip()
    if not rest:
        return SubgoalCommand("list")
    if lower in ("remove", "rm") and arg.isdigit():
        return SubgoalCommand("remove", index=index_of(arg, "/subgoal remove N"))
    if lower == "clear" and not arg:
        return SubgoalCommand("clear")
    return SubgoalCommand("add", text=checked(rest, "/subgoal: the criterion"))
