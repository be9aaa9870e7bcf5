"""After a turn: how it ended, and the transcript made valid (and rolled back if asked).

The session calls these once its turn task has exited (or was killed): the
result is the task's value, a killed turn's too (it settles and returns); a
crashed turn raises it in ``TurnCrashed``; one that never settled gets a
``failed`` result naming the exit. ``repair`` reloads a dirty transcript,
closes tool calls left open and rolls the turn back when a ``rollback`` busy
mode replaced it.
"""

from __future__ import annotations

import attrs

from actors import ExitReason
from hermes.model import Message
from hermes.store import StoreError

from . import events as ev
from .context_keeper import ContextKeeper
from .conversation import Conversation
from .outcome import TurnCrashed, TurnDone, TurnEnd, TurnResult
from .task_child import TaskChild


async def turn_result(number: int, task: TaskChild[TurnDone]) -> TurnDone:
    """How turn ``number`` ended: its value (a killed turn's too); a crashed one's settled
    result; else (it never settled, or outlived its kill) failed."""
    outcome = await task.exited()
    if isinstance(outcome, TurnDone):
        return outcome
    if isinstance(outcome, ExitReason) and isinstance(outcome.error, TurnCrashed):
        return outcome.error.done
    reason = task.ref.exit_reason
    why = reason.describe() if reason is not None else "it did not exit in time"
    return TurnDone(TurnResult(number, TurnEnd.FAILED, "", f"the turn crashed: {why}"), None)


async def repair(
    conv: Conversation,
    keeper: ContextKeeper,
    hub: ev.EventHub,
    result: TurnResult,
    rollback: tuple[int, Message | None] | None,
) -> TurnResult:
    """Make sure the transcript is valid (and rolled back if asked) after a turn.

    ``rollback``: the length of the transcript before the turn and its last message
    then, to go back to (None: keep the turn).
    """
    try:
        if conv.dirty:
            await conv.resync()
        await conv.close_open_uses(f"the turn ended abnormally ({result.detail})")
        if rollback is not None and result.compacted:
            detail = "not rolled back: the transcript was compacted during the turn"
            result = attrs.evolve(result, detail=f"{result.detail}; {detail}")
        elif rollback is not None:
            await conv.rollback_to(*rollback)
            keeper.meter.reset()  # its anchor may be in the rows just dropped
            result = attrs.evolve(result, reason=TurnEnd.ROLLED_BACK)
    except StoreError as error:
        conv.dirty = True
        hub.publish(ev.ErrorOccurred(result.turn, "store", str(error)))
        result = attrs.evolve(
            result, detail=f"{result.detail}; the transcript could not be repaired: {error}"
        )
    return result
