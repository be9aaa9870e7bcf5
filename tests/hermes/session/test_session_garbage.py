"""A closed session is freed by reference counting, not left to the cyclic collector.

Its owned parts (keeper, review host, subagent link) held bound methods of the
actor: every closed session was ~150 objects of cyclic garbage. The collector's
finds are saved (``DEBUG_SAVEALL``) and none may be a part of a session.
"""

from __future__ import annotations

import gc
from typing import Any

import attrs
import pytest

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionConfig, SessionDeps, TurnEnd, start_session
from hermes.session.context_keeper import ContextKeeper
from hermes.session.conversation import Conversation
from hermes.session.reviews import ReviewHost
from hermes.session.session import SessionActor
from hermes.subagents import SubagentRuntime, with_delegation

SESSION_TYPES = (SessionActor, ContextKeeper, ReviewHost, Conversation)


@pytest.mark.parametrize("delegating", [False, True], ids=["plain", "delegating"])
async def test_closed_sessions_leave_no_cyclic_garbage(
    system: ActorSystem,
    config: SessionConfig,
    deps: SessionDeps,
    fake: FakeProvider,
    saved_garbage: list[Any],
    delegating: bool,
) -> None:
    if delegating:
        runtime = SubagentRuntime()
        deps = attrs.evolve(deps, registry=with_delegation(deps.registry), subagents=runtime.host())
    for _ in range(3):
        handle = await start_session(system, config, deps)
        fake.enqueue(Reply.of(ToolUse("terminal", {"command": "echo hi"})), Reply.of("done"))
        assert (await handle.run("go")).reason is TurnEnd.COMPLETED
        await handle.close()
        del handle
    gc.collect()
    found = [type(o).__name__ for o in saved_garbage if isinstance(o, SESSION_TYPES)]
    assert found == []
