"""After a turn: how it ended, and the transcript made valid (and rolled back if asked).

The session calls these once its turn task has exited (or was killed): the
result is the task's value; a killed or crashed turn gives none, and then
what its settle step recorded stands in, or a ``failed`` result naming the
exit. ``repair`` reloads a dirty transcript, closes tool calls left open and
rolls the turn back when a ``rollback`` busy mode replaced it.
"""

from __future__ import annotations

import attrs

from hermes.store import StoreError

from . import events as ev
from .context_keeper import ContextKeeper
from .conversation import Conversation
from .outcome import TurnEnd, TurnResult
from .task_child import TaskChild
from .turn import TurnProgress


async def turn_result(
    number: int, task: TaskChild[TurnResult], progress: TurnProgress
) -> TurnResult:
    """How turn ``number`` ended: its value; what its settle step recorded; else failed."""
    outcome = await task.exited()
    if isinstance(outcome, TurnResult):
        return outcome
    if progress.settled is not None:  # killed or crashed: it settled (or tried to) all the same
        return progress.settled
    reason = task.ref.exit_reason
    why = reason.describe() if reason is not None else "it did not exit in time"
    return TurnResult(number, TurnEnd.FAILED, "", f"the turn crashed: {why}")


async def repair(
    conv: Conversation,
    keeper: ContextKeeper,
    hub: ev.EventHub,
    progress: TurnProgress,
    result: TurnResult,
    rollback: bool,
) -> TurnResult:
    """Make sure the transcript is valid (and rolled back if asked) after a turn."""
    try:
        if conv.dirty:
            await conv.resync()
        await conv.close_open_uses(f"the turn ended abnormally ({result.detail})")
        if rollback and progress.compacted:
            detail = "not rolled back: the transcript was compacted during the turn"
            result = attrs.evolve(result, detail=f"{result.detail}; {detail}")
        elif rollback:
            await conv.rollback_to(progress.start_len, progress.start_last)
            keeper.meter.reset()  # its anchor may be in the rows just dropped
            result = attrs.evolve(result, reason=TurnEnd.ROLLED_BACK)
    except StoreError as error:
        conv.dirty = True
        hub.publish(ev.ErrorOccurred(result.turn, "store", str(error)))
        result = attrs.evolve(
            result, detail=f"{result.detail}; the transcript could not be repaired: {error}"
        )
    return result
