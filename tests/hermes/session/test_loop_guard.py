"""Loop guardrails through a session (issue 24, item 3; seeds #170, #190).

The same terminal call with the same large result: a stub from the 2nd, a
warning from the 3rd, and at the 5th a scheduled run's turn (a cron job, a
kanban worker) halts while any other (headless, attended, a subagent) is only
warned, unless ``loop_halt`` says otherwise. Process polls never warn.
"""

from __future__ import annotations

import attrs
import pytest
import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.session import SessionConfig, SessionDeps, SessionHandle, TurnEnd, start_session
from hermes.store import StoreClient
from hermes.subagents.child import child_config
from hermes.subagents.config import SubagentConfig
from hermes.subagents.tasks import TaskSpec

from .conftest import SessionFactory
from .helpers import assert_valid, result_text, results_by_id

BIG = "printf 'x%.0s' $(seq 600)"  # 600 characters, the same every time
SMALL = "echo same"


def _repeats(fake: FakeProvider, command: str, times: int) -> list[str]:
    """Script ``times`` identical calls, one per model reply, then a closing reply."""
    ids = [f"toolu_{n}" for n in range(1, times + 1)]
    fake.enqueue(
        *(Reply.of(ToolUse("terminal", {"command": command}, id=i)) for i in ids),
        Reply.of("done"),
    )
    return ids


async def _texts(store: StoreClient, session: SessionHandle, ids: list[str]) -> list[str]:
    transcript = await store.load(session.id)
    assert_valid(transcript)
    blocks = results_by_id(transcript)
    return [result_text(blocks[i]) for i in ids if i in blocks]


async def test_a_scheduled_turn_is_stubbed_warned_and_halted_at_the_fifth(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_session(scheduled=True)
    ids = _repeats(fake, BIG, 6)
    with trio.fail_after(30):
        result = await session.run("loop")
    assert result.reason is TurnEnd.HALTED
    assert "terminal was called 5 times with the same arguments" in result.detail
    texts = await _texts(store, session, ids)
    assert texts[0].startswith("x" * 600) and "[Identical" not in texts[0]
    for text in texts[1:5]:
        assert text.startswith("[Identical to the result of call toolu_1 in this turn"), text
        assert "x" * 600 not in text
    assert "[Warning" not in texts[1]
    assert "this is call 3 of terminal" in texts[2] and "at 5 the turn stops" in texts[2]
    assert "this is call 4 of terminal" in texts[3]
    assert "Turn halted" in texts[4]
    assert len(texts) == 5  # the 6th call was never made
    assert fake.script.pending == 2  # the 6th call and the closing reply were not asked for


async def _only_warned(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, *, approver: bool
) -> None:
    """Six identical calls run to the closing reply, warned from the 3rd, never halted."""
    ids = _repeats(fake, BIG, 6)
    with session.subscribe(approvals=approver), trio.fail_after(30):
        result = await session.run("loop")
    assert result.reason is TurnEnd.COMPLETED and result.text == "done"
    texts = await _texts(store, session, ids)
    assert len(texts) == 6
    for number, text in enumerate(texts[2:], start=3):
        assert f"this is call {number} of terminal" in text, text
        assert "repeating it changes nothing" in text
        assert "Turn halted" not in text


async def test_an_attended_turn_is_only_warned(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    await _only_warned(session, fake, store, approver=True)


async def test_a_headless_turn_is_only_warned_at_the_defaults(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    """Nobody attached to approve (an API client, a script): Hermes' API server warns."""
    await _only_warned(session, fake, store, approver=False)


async def test_a_subagent_is_only_warned_even_under_a_scheduled_parent(
    system: ActorSystem,
    config: SessionConfig,
    deps: SessionDeps,
    fake: FakeProvider,
    store: StoreClient,
) -> None:
    parent = attrs.evolve(config, scheduled=True)
    child = child_config(parent, SubagentConfig(), "sub_1", TaskSpec(goal="loop"))
    session = await start_session(system, child, deps)
    await _only_warned(session, fake, store, approver=False)


async def test_loop_halt_unattended_also_halts_a_turn_nobody_can_approve_in(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    session = await open_session(loop_halt="unattended")
    _repeats(fake, BIG, 6)
    with trio.fail_after(30):
        result = await session.run("loop")
    assert result.reason is TurnEnd.HALTED and "called 5 times" in result.detail


async def test_loop_halt_never_only_warns_a_scheduled_turn(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_session(scheduled=True, loop_halt="never")
    await _only_warned(session, fake, store, approver=False)


def test_a_bad_loop_halt_is_refused_by_name(config: SessionConfig) -> None:
    with pytest.raises(ValueError, match="loop_halt"):
        attrs.evolve(config, loop_halt="sometimes")


async def test_a_small_repeated_result_is_warned_but_not_stubbed(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    ids = _repeats(fake, SMALL, 3)
    with trio.fail_after(30):
        await session.run("loop")
    texts = await _texts(store, session, ids)
    assert all(t.startswith("same\n[exit code: 0]") for t in texts), texts
    assert "[Warning" in texts[2] and "[Warning" not in texts[1]


async def test_process_polls_are_never_warned(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    ids = [f"toolu_{n}" for n in range(1, 7)]
    fake.enqueue(
        *(Reply.of(ToolUse("process", {"action": "list"}, id=i)) for i in ids),
        Reply.of("done"),
    )
    with trio.fail_after(30):
        result = await session.run("poll")
    assert result.reason is TurnEnd.COMPLETED  # unattended, and six identical polls
    texts = await _texts(store, session, ids)
    assert len(texts) == 6 and len(set(texts)) == 1
    assert not any("[Warning" in t or "halted" in t for t in texts), texts
