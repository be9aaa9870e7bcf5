"""Valid history after crashes: a session crashed mid tool batch, a daemon killed with
tool uses open, and a turn that outlives its stop (found by ``test_valid_history``).

The world (supervised store and session over a fake provider) is
``history_world.py``'s ``open_world``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio

from actors import (
    ActorExitedEvent,
    ExitReason,
    UnkillableReported,
)
from hermes import codec
from hermes.fake import Reply, Text, ToolUse
from hermes.model import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from hermes.session import (
    TurnEnd,
)
from hermes.session import events as ev
from hermes.session.messages import GetHub
from hermes.store import (
    StoreClient,
    Transcript,
)

from .history_model import (
    check_history,
)
from .history_world import MODEL, SESSION_ID, InjectedCrash, World, open_world

# -- crashes mid tool batch, without hypothesis ------------------------------------------


def _packed(messages: Sequence[Message]) -> list[bytes]:
    return [codec.pack(m) for m in messages]


def _packed_blocks(blocks: Sequence[object]) -> list[bytes]:
    return [codec.pack(b) for b in blocks]


async def _wait_stored(world: World, ready: Callable[[Transcript], bool]) -> Transcript:
    while True:
        transcript = await world.store.load(SESSION_ID)
        if ready(transcript):
            return transcript
        await trio.sleep(0.01)


def _results(message: Message) -> dict[str, ToolResultBlock]:
    return {b.tool_use_id: b for b in message.content if isinstance(b, ToolResultBlock)}


async def test_session_crash_mid_batch_resumes_with_synthetic_results(tmp_path: Path) -> None:
    """Two calls done and flushed, one running: crash the session; the restart keeps
    the history byte for byte, the running call gets a synthetic error result, and
    the next prompt runs on that history."""
    async with open_world(tmp_path) as world:
        world.fake.enqueue(
            Reply.of(
                "three calls",
                ToolUse("read_file", {"path": "a.txt"}, id="toolu_read"),
                ToolUse("terminal", {"command": "echo fast"}, id="toolu_echo"),
                ToolUse("terminal", {"command": "sleep 30"}, id="toolu_sleep"),
            )
        )
        first = world.incarnations[-1]
        with trio.fail_after(15):
            await world.handle.prompt("run three tools")
            # Wait until the two quick results are persisted and the sleep runs.
            before = await _wait_stored(
                world, lambda t: t.next_seq == 3 and len(_results(t.messages[2])) == 2
            )
            assert set(_results(before.messages[2])) == {"toolu_read", "toolu_echo"}
            assert before.open_tool_uses == ("toolu_sleep",)
            state = await world.handle.state()
            assert state.busy and state.turn_path is not None
            assert world.system.lookup(f"{state.turn_path}/tool-toolu_sleep") is not None

            crashed = world.child.ref
            assert crashed is not None
            await crashed.kill(ExitReason.from_exception(InjectedCrash("mid-batch")))
            world.handle.hub = await world.child.call(GetHub(), timeout=10)
            restarted = world.incarnations[-1]
            assert restarted is not first and world.child.ref not in (None, crashed)

            after = await world.store.load(SESSION_ID)
            state = await world.handle.state()
        assert not state.busy and state.messages == after.next_seq == 3
        assert check_history(after.messages, settled=True) == []
        assert after.open_tool_uses == ()
        assert restarted.conversation.messages == list(after.messages)
        # The prompt and the reply are byte-identical; so are the results that landed.
        assert _packed(after.messages[:2]) == _packed(before.messages[:2])
        results = _results(after.messages[2])
        assert list(results) == ["toolu_read", "toolu_echo", "toolu_sleep"]
        for call_id in ("toolu_read", "toolu_echo"):
            assert codec.pack(results[call_id]) == codec.pack(_results(before.messages[2])[call_id])
        assert "alpha" in str(results["toolu_read"].content)
        synthetic = results["toolu_sleep"]
        assert synthetic.is_error
        assert re.search(r"cancelled|has no result|stopped", str(synthetic.content)), synthetic

        world.fake.enqueue(Reply.of("resumed"))
        with trio.fail_after(10):
            result = await world.handle.run("carry on")
        assert result.reason is TurnEnd.COMPLETED, result
        assert result.text == "resumed"
        final = await world.store.load(SESSION_ID)
        assert check_history(final.messages, settled=True) == []
        # The new prompt joins the results message (roles alternate); nothing else moved.
        assert _packed(final.messages[:2]) == _packed(after.messages[:2])
        assert _packed_blocks(final.messages[2].content[:3]) == _packed_blocks(
            after.messages[2].content
        )
        assert final.messages[2].content[3] == TextBlock("carry on")
        sent = world.fake.message_requests[-1].body["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        sent_ids = [b["tool_use_id"] for b in sent[2]["content"] if b["type"] == "tool_result"]
        assert sent_ids == ["toolu_read", "toolu_echo", "toolu_sleep"]


async def test_restart_closes_tool_uses_a_hard_crash_left_open(tmp_path: Path) -> None:
    """A daemon killed mid-batch (no settle at all) left one result of two and a steer:
    the session's start adds the missing result before the steer, changes nothing else."""
    stored = [
        Message("user", (TextBlock("do two things"),)),
        Message(
            "assistant",
            (
                TextBlock("on it"),
                ToolUseBlock("toolu_a", "terminal", {"command": "echo a"}),
                ToolUseBlock("toolu_b", "terminal", {"command": "sleep 30"}),
            ),
        ),
        Message(
            "user",
            (ToolResultBlock("toolu_a", "a\n"), TextBlock("[Steer from the user: hurry]")),
        ),
    ]

    async def prepare(store: StoreClient) -> None:
        await store.create_session(model=MODEL, session_id=SESSION_ID)
        await store.append(SESSION_ID, stored, expected_seq=0)

    async with open_world(tmp_path, prepare) as world:
        with trio.fail_after(10):
            resumed = await world.store.load(SESSION_ID)
        assert resumed.open_tool_uses == ()
        assert check_history(resumed.messages, settled=True) == []
        assert _packed(resumed.messages[:2]) == _packed(stored[:2])
        content = resumed.messages[2].content
        assert codec.pack(content[0]) == codec.pack(stored[2].content[0])
        assert isinstance(content[1], ToolResultBlock) and content[1].tool_use_id == "toolu_b"
        assert content[1].is_error and "has no result" in str(content[1].content)
        assert content[2] == stored[2].content[1]  # the steer stays, after the results
        assert world.incarnations[-1].conversation.messages == list(resumed.messages)

        world.fake.enqueue(Reply.of("fine"))
        with trio.fail_after(10):
            result = await world.handle.run("and now?")
        assert result.reason is TurnEnd.COMPLETED, result
        final = await world.store.load(SESSION_ID)
        assert check_history(final.messages, settled=True) == []
        assert _packed(final.messages[:2]) == _packed(resumed.messages[:2])
        assert _packed_blocks(final.messages[2].content[:3]) == _packed_blocks(content)
        assert final.messages[2].content[3] == TextBlock("and now?")


# -- regression: a turn that outlives its stop --------------------------------------------


STUBBORN = "trap '' TERM; echo ready; sleep 1"
"""Ignores SIGTERM: a cancelled terminal waits its 0.2 s cancel grace, then SIGKILLs."""


@pytest.mark.parametrize("stop", ["cancel", "rollback", "crash_session"])
async def test_a_turn_that_outlives_its_stop_cannot_write(tmp_path: Path, stop: str) -> None:
    """Found with ``test_history_stays_valid``'s actions (``[Prompt('stubborn'),
    Pause(0.05), Prompt('slow_text', 'rollback')]``; its random search also hit
    ``[Steer(), Prompt('stubborn', 'queue'), Redirect(), CrashSession('now')]``): a turn
    reported unkillable (here: kill grace 0.1 s, shorter than the terminal's 0.2 s
    cancel grace for a command that ignores SIGTERM; before that grace was cut from
    1 s, the defaults did it under load) went on settling
    on the conversation the session had taken back, racing the session's repair and
    the next turn (a refused write, a dirty idle session, or the next prompt replaced
    by the old turn's results; after a session crash, the restart's repair refused as
    stale). Now the session claims a new writer epoch when it leaves the turn behind
    (and a restarted one when it opens the transcript), so the old turn's writes,
    carrying its copy's epoch, are refused by the store as ``StaleWriter`` (not a
    ``SeqConflict``: nothing of them is attempted on the transcript). Without the fix the
    store refuses a write in the rollback and crash cases every time; the cancel
    case's race is narrow, so each case also checks the fence itself."""
    async with open_world(tmp_path, kill_grace=0.1) as world:
        with world.system.events.subscribe(1000) as events, world.handle.subscribe() as sub:
            world.fake.enqueue(
                Reply.of("stubborn", ToolUse("terminal", {"command": STUBBORN}, id="toolu_st"))
            )
            with trio.fail_after(10):
                await world.handle.prompt("start")
                async for item in sub.receive:  # the trap is set once "ready" is out
                    if isinstance(item.payload, ev.ToolOutput) and "ready" in item.payload.text:
                        break
                state = await world.handle.state()
                old_turn = state.turn_path
                epoch = world.incarnations[-1].conversation.writer  # turn-1's copy's
                # The next turn is still streaming while the old one settles.
                world.fake.enqueue(Reply.of(Text(deltas=tuple("abcdefghij")), event_delay=0.1))
                if stop == "cancel":
                    await world.handle.cancel()
                    await world.handle.prompt("next prompt")
                elif stop == "rollback":
                    await world.handle.prompt("next prompt", mode="rollback")
                else:
                    crashed = world.child.ref
                    assert crashed is not None
                    await crashed.kill(ExitReason.from_exception(InjectedCrash("stop")))
                    world.handle.hub = await world.child.call(GetHub(), timeout=10)
                    await world.handle.prompt("next prompt")
                # Wait for the old turn to exit for real (its settle has been tried).
                seen: list[object] = []
                while not any(isinstance(e, ActorExitedEvent) and e.path == old_turn for e in seen):
                    seen.extend(await _next_events(events))
                reported = [e.path for e in seen if isinstance(e, UnkillableReported)]
                assert old_turn in reported, f"the old turn was not unkillable: {seen}"
                result_state = await world.handle.state()
                while result_state.busy:
                    await trio.sleep(0.02)
                    result_state = await world.handle.state()
            transcript = await world.store.load(SESSION_ID)
            session = world.incarnations[-1]
        assert world.recorder.refused == []
        # Whatever the timing of the old turn's settle (the races above are narrow for
        # a cancel), its epoch was made stale before anyone went on.
        assert epoch is not None and session.conversation.writer is not None
        assert session.conversation.writer > epoch
        assert check_history(transcript.messages, settled=True) == []
        assert not session.conversation.dirty
        assert session.conversation.messages == list(transcript.messages)
        prompts = [
            b.text
            for m in transcript.messages
            if m.role == "user"
            for b in m.content
            if isinstance(b, TextBlock)
        ]
        assert "next prompt" in prompts
        assert transcript.messages[-1] == Message("assistant", (TextBlock("abcdefghij"),))


async def _next_events(sub: Any) -> list[object]:
    first = await sub.receive.receive()
    return [first, *sub.drain()]
