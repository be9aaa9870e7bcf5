"""The session's side of its standing goal and loop (``hermes.goals``).

``goal_keeper`` builds the session's ``GoalKeeper`` with what it needs of the
session as callbacks that hold the session weakly (a closed session must not
be cyclic garbage): its turn number, whether it is busy, and a way to hand it
machine input (goal continuations and loop wakeups travel that road: they
never interrupt a turn), and a way to save its state in the store after each
change (``restore_goals`` reads it back when the session starts). ``apply``
runs one command and turns a ``GoalError`` into the session's ``InvalidInput``
(``invalid_params`` on the wire).
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING

from hermes.goals import (
    Command,
    GoalAnswer,
    GoalError,
    GoalHost,
    GoalKeeper,
    GoalReplied,
    parse_slash,
)
from hermes.store import StoreError
from hermes.store.goal_queries import LoadGoals, SaveGoals

from .errors import InvalidInput, SessionClosed
from .events import EventHub
from .messages import MachineInput

if TYPE_CHECKING:
    from .turns import TurnOwner

log = logging.getLogger(__name__)


def goal_keeper(owner: TurnOwner) -> GoalKeeper:
    """The keeper of ``owner``'s goal and loop (called from the session's ``on_start``)."""
    config = owner.config
    ref = weakref.ref(owner)

    def session() -> TurnOwner:
        alive = ref()
        if alive is None:
            raise SessionClosed("the session is gone")
        return alive

    async def send(source: str, text: str, on_delivered: object) -> None:
        await session()._machine_input(
            MachineInput(source, text, on_delivered=on_delivered)  # type: ignore[arg-type]
        )

    store, session_id, timeout = owner.deps.store, owner.session_id, config.store_timeout

    async def save(state: str | None) -> None:
        assert session_id is not None
        try:
            await store.request(SaveGoals(session_id, state), timeout=timeout)
        except StoreError as error:
            log.warning("session %s: its goal was not saved: %s", session_id, error)

    def busy() -> bool:
        s = session()
        return s._running is not None or len(s.queue) > 0

    host = GoalHost(
        ctx=owner.ctx,
        client=owner.deps.client,
        model=config.goals.judge_model or config.judge_model or config.model,
        settings=config.goals,
        cwd=config.cwd,
        env=owner.tools_ctx.env,
        publish=owner.hub.publish,
        send=send,
        turn_number=lambda: session().turn_number,
        busy=busy,
        attended=not config.unattended,
        save=save,
        processes=owner.processes,
    )
    return GoalKeeper(host)


async def restore_goals(owner: TurnOwner) -> None:
    """Give the keeper what the session's previous incarnation saved (a goal comes back
    paused, a loop goes on); a store that cannot be read leaves it empty (logged)."""
    assert owner.session_id is not None
    try:
        state = await owner.deps.store.request(
            LoadGoals(owner.session_id), timeout=owner.config.store_timeout
        )
    except StoreError as error:
        log.warning("session %s: its goal could not be read: %s", owner.session_id, error)
        return
    if state is not None:
        await owner.goals.restore(state)


async def apply(keeper: GoalKeeper, command: Command) -> GoalAnswer:
    try:
        return await keeper.handle(command)
    except GoalError as error:
        raise InvalidInput(str(error)) from None


async def apply_slash(keeper: GoalKeeper, hub: EventHub, text: str) -> GoalAnswer:
    """A person's ``/goal``, ``/subgoal`` or ``/loop`` prompt: applied, and its answer
    published (``goal.replied``) for the surface that sent it."""
    try:
        answer = await keeper.handle(parse_slash(text))
    except GoalError as error:
        raise InvalidInput(str(error)) from None
    hub.publish(GoalReplied(answer.output))
    return answer
