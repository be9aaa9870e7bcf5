"""``goal.*`` and ``loop.*``: a session's standing goal and loop (``hermes.goals``).

``goal.set`` (``session``, ``text``; optional ``max_turns``, ``draft``),
``goal.get``, ``goal.pause``, ``goal.resume``, ``goal.clear``, ``goal.command``
(``text``: any ``/goal``, ``/subgoal`` or ``/loop`` line, the same grammar a
prompt uses), ``loop.set`` (``prompt``; optional ``every`` such as ``5m``,
``times``, ``until``), ``loop.pause``, ``loop.resume``, ``loop.stop``. Each
answers ``{output, goal, loop, turn}``. A bad command is ``invalid_params``
with the reason, an unknown session ``unknown_session``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hermes.daemon.errors import RequestError
from hermes.daemon.manager import Entry
from hermes.goals import (
    Command,
    GoalError,
    GoalVerb,
    LoopSpec,
    LoopVerb,
    SetGoal,
    SetLoop,
    is_slash,
    parse_slash,
)
from hermes.goals.commands import checked
from hermes.goals.loop import parse_interval

from .params import Method, Params


def goal_methods(entry: Callable[[Params], Awaitable[Entry]]) -> dict[str, Method]:
    """The ``goal.*`` and ``loop.*`` entries of the method table."""

    def invalid(p: Params, error: GoalError) -> RequestError:
        return RequestError(f"{p.method}: {error}", "invalid_params")

    def method(build: Callable[[Params], Command]) -> Method:
        async def call(p: Params) -> Any:
            try:
                command = build(p)
            except GoalError as error:
                raise invalid(p, error) from None
            target = await entry(p)
            p.done()
            answer = await target.handle.goal(command)
            return {
                "output": answer.output,
                "goal": answer.goal,
                "loop": answer.loop,
                "turn": answer.turn,
            }

        return call

    def set_goal(p: Params) -> Command:
        text = checked(p.prose("text"), "the goal text")
        return SetGoal(
            text=text,
            max_turns=p.opt_int("max_turns", None, 1, 1000),
            draft=p.opt_bool("draft", False),
        )

    def command(p: Params) -> Command:
        text = p.prose("text")
        if not is_slash(text):
            raise GoalError("text must start with /goal, /subgoal or /loop")
        return parse_slash(text)

    def set_loop(p: Params) -> Command:
        prompt = checked(p.prose("prompt"), "the loop prompt")
        every = p.opt_str("every", limit=20)
        interval = parse_interval(every) if every is not None else None
        if every is not None and interval is None:
            raise GoalError(f"every must be an interval like 30s, 5m, 2h or 1h30m, got {every!r}")
        until = p.opt_prose("until")
        spec = LoopSpec(
            prompt=prompt,
            interval=interval,
            times=p.opt_int("times", 0, 0, 10_000) or 0,
            until=checked(until, "the until condition") if until is not None else "",
        )
        return SetLoop(spec)

    def verb(kind: type[GoalVerb] | type[LoopVerb], name: str) -> Method:
        return method(lambda p: kind(name))

    return {
        "goal.set": method(set_goal),
        "goal.get": verb(GoalVerb, "status"),
        "goal.pause": verb(GoalVerb, "pause"),
        "goal.resume": verb(GoalVerb, "resume"),
        "goal.clear": verb(GoalVerb, "clear"),
        "goal.command": method(command),
        "loop.set": method(set_loop),
        "loop.pause": verb(LoopVerb, "pause"),
        "loop.resume": verb(LoopVerb, "resume"),
        "loop.stop": verb(LoopVerb, "stop"),
    }


def goal_route(
    verb: str, rest: list[str], body: dict[str, Any], session: str
) -> tuple[str, dict[str, Any]] | None:
    """HTTP routes under ``/sessions/{id}`` (``http_api.py``): ``GET .../goal``,
    ``POST .../goal`` (set), ``POST .../goal/{pause,resume,clear,command}``,
    ``POST .../loop`` (set), ``POST .../loop/{pause,resume,stop}``."""
    if not rest or rest[0] not in ("goal", "loop"):
        return None
    kind = rest[0]
    if len(rest) == 1 and verb == "GET" and kind == "goal":
        return "goal.get", {"session": session}
    if len(rest) == 1 and verb == "POST":
        return f"{kind}.set", {**body, "session": session}
    verbs = (
        ("pause", "resume", "clear", "command") if kind == "goal" else ("pause", "resume", "stop")
    )
    if len(rest) == 2 and verb == "POST" and rest[1] in verbs:
        return f"{kind}.{rest[1]}", {**body, "session": session}
    return None
