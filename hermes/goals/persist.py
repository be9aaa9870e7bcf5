"""A session's goal and loop as stored text, and what a restarted session makes of it.

``dump`` gives a JSON object (``None`` when there is neither); the session
writes it to the store (``session_goals``) after every change. ``load`` reads it
back when the session starts again: an active goal comes back **paused**
(nothing drives its next turn across a restart, and seed #233 leaves going on
to the person: ``/goal resume``); a loop comes back as it was, its next wakeup
armed afresh. Unreadable text is no goal (logged).
"""

from __future__ import annotations

import json
import logging

import attrs

from hermes import codec

from .loop import Loop
from .record import Goal, GoalStatus

log = logging.getLogger(__name__)

RESTARTED = "the session restarted"


def dump(goal: Goal | None, loop: Loop | None) -> str | None:
    if goal is None and loop is None:
        return None
    state = {
        "goal": codec.to_plain(goal) if goal is not None else None,
        "loop": codec.to_plain(loop) if loop is not None else None,
    }
    return json.dumps(state, ensure_ascii=False, sort_keys=True)


def load(text: str | None) -> tuple[Goal | None, Loop | None]:
    if not text:
        return None, None
    try:
        state = json.loads(text)
        goal = codec.from_plain(state["goal"], Goal) if state.get("goal") else None
        loop = codec.from_plain(state["loop"], Loop) if state.get("loop") else None
    except (ValueError, KeyError, TypeError, codec.CodecError) as error:
        log.warning("a stored goal could not be read (dropped): %s", error)
        return None, None
    if goal is not None and goal.status is GoalStatus.ACTIVE:
        goal = attrs.evolve(goal.paused(RESTARTED), since_turn=0, drafting=False)
    if loop is not None:
        loop = attrs.evolve(loop, awaiting_turn=None)
    return goal, loop
