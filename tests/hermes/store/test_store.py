"""The store's main promises: byte-identical resume, lineage, usage, transcript rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors import ActorSystem, open_system
from hermes import codec
from hermes.model.types import (
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from hermes.store import (
    MIGRATIONS,
    InvalidTranscript,
    SeqConflict,
    SessionEnded,
    SessionNotFound,
    SetTitle,
    StoreClient,
    spawn_store,
)

from ..transcripts import transcripts

Peek = Callable[[], apsw.Connection]


def rich_transcript() -> list[Message]:
    """Every block type, cache marks, nested tool input, results as text and as blocks."""
    return [
        Message(
            "user",
            (
                TextBlock("Find the biggest file", cache=True),
                ImageBlock("image/png", "iVBORw0KGgo="),
            ),
        ),
        Message(
            "assistant",
            (
                ThinkingBlock("I should list the directory.", "c2lnbmF0dXJl"),
                RedactedThinkingBlock("ZW5jcnlwdGVk"),
                TextBlock("Listing files."),
                ToolUseBlock("toolu_01", "terminal", {"command": "ls -S", "env": {"A": "1"}}),
                ToolUseBlock(
                    "toolu_02",
                    "read_file",
                    {"path": "/etc/hosts", "limit": 20, "x": [1.5, None, True]},
                ),
            ),
        ),
        Message(
            "user",
            (
                ToolResultBlock("toolu_01", "big.iso\nsmall.txt"),
                ToolResultBlock(
                    "toolu_02",
                    (TextBlock("127.0.0.1 localhost"), ImageBlock("image/gif", "R0lG")),
                    is_error=True,
                    cache=True,
                ),
            ),
        ),
        Message("assistant", (TextBlock("big.iso is the biggest file. ünïcödé ✓ 日本語"),)),
    ]


async def test_append_then_load_is_byte_identical(store: StoreClient, peek: Peek) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="claude-test", title="files")
        messages = rich_transcript()
        first = await store.append(info.id, messages[:1], expected_seq=0)
        rest = await store.append(info.id, messages[1:], expected_seq=1, usage=Usage(10, 20))
        assert (first.first_seq, first.next_seq) == (0, 1)
        assert (rest.first_seq, rest.next_seq, rest.replayed) == (1, 4, False)

        transcript = await store.load(info.id)
        assert transcript.messages == tuple(messages)
        assert [codec.pack(m) for m in transcript.messages] == [codec.pack(m) for m in messages]
        assert transcript.open_tool_uses == ()
        assert transcript.next_seq == 4
        assert transcript.session.message_count == 4

    # The blob on disk is exactly the msgpack of the plain content blocks.
    rows = list(
        peek().execute(
            "SELECT seq, role, content FROM messages WHERE session_id = ? ORDER BY seq", (info.id,)
        )
    )
    assert [(seq, role) for seq, role, _ in rows] == [(i, m.role) for i, m in enumerate(messages)]
    assert [bytes(blob) for _, _, blob in rows] == [codec.pack_blocks(m.content) for m in messages]


async def test_each_write_is_committed_when_the_call_returns(
    store: StoreClient, peek: Peek
) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        conn = peek()
        for seq, message in enumerate(
            [Message.user("one"), Message("assistant", (TextBlock("two"),)), Message.user("three")]
        ):
            await store.append(info.id, message, expected_seq=seq)
            # Another connection sees it at once: committed, not pending in a transaction.
            count = conn.execute(
                "SELECT count(*) FROM messages WHERE session_id = ?", (info.id,)
            ).get
            assert count == seq + 1


async def test_wal_mode_is_on(store: StoreClient, peek: Peek, store_dir: Path) -> None:
    with trio.fail_after(10):
        await store.create_session(model="m")
    conn = peek()
    assert conn.pragma("journal_mode") == "wal"
    assert (store_dir / "hermes.db-wal").exists()
    assert conn.execute("SELECT max(version) FROM schema_version").get == len(MIGRATIONS)


async def test_resume_after_closing_and_reopening(store_dir: Path) -> None:
    messages = rich_transcript()
    with trio.fail_after(20):
        async with open_system("first") as system:
            store = await spawn_store(system, store_dir)
            info = await store.create_session(model="m", title="resume me")
            await store.append(info.id, messages[:3], expected_seq=0, usage=Usage(5, 6, 7, 8))

        async with open_system("second") as system:
            store = await spawn_store(system, store_dir)
            transcript = await store.load(info.id)
            assert transcript.messages == tuple(messages[:3])
            assert [codec.pack(m) for m in transcript.messages] == [
                codec.pack(m) for m in messages[:3]
            ]
            assert transcript.session.title == "resume me"
            assert transcript.session.usage == Usage(5, 6, 7, 8)
            # Carry on where the first daemon stopped.
            await store.append(info.id, messages[3], expected_seq=transcript.next_seq)

        async with open_system("third") as system:
            store = await spawn_store(system, store_dir)
            assert (await store.load(info.id)).messages == tuple(messages)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(messages=transcripts(), data=st.data())
async def test_any_valid_transcript_round_trips(
    system: ActorSystem, store_dir: Path, messages: list[Message], data: st.DataObject
) -> None:
    # Each example runs in its own trio run with its own store on the same file.
    with trio.fail_after(20):
        store = await spawn_store(system, store_dir, register=None)
        info = await store.create_session(model="m")
        seq = 0
        while seq < len(messages):
            size = data.draw(st.integers(1, len(messages) - seq))
            await store.append(info.id, messages[seq : seq + size], expected_seq=seq)
            seq += size
        loaded = (await store.load(info.id)).messages
    assert loaded == tuple(messages)
    assert [codec.pack(m) for m in loaded] == [codec.pack(m) for m in messages]


async def test_parent_links(store: StoreClient) -> None:
    with trio.fail_after(10):
        parent = await store.create_session(model="m", title="parent")
        a = await store.create_session(model="m", parent_id=parent.id, session_id="child-a")
        b = await store.create_session(model="m", parent_id=parent.id, session_id="child-b")
        grandchild = await store.create_session(model="m", parent_id=a.id)
        await store.create_session(model="m", title="unrelated")

        assert a.parent_id == parent.id and grandchild.parent_id == "child-a"
        children = await store.list_sessions(parent_id=parent.id)
        assert sorted(s.id for s in children) == ["child-a", "child-b"]
        assert [s.id for s in await store.list_sessions(parent_id=a.id)] == [grandchild.id]
        assert (await store.get_session(b.id)).parent_id == parent.id

        with pytest.raises(SessionNotFound, match=r"parent session 'ghost' does not exist"):
            await store.create_session(model="m", parent_id="ghost")


async def test_usage_accumulates(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        assert info.usage == Usage()
        await store.append(info.id, Message.user("q"), usage=Usage(100, 0, 0, 0))
        await store.append(
            info.id, Message("assistant", (TextBlock("a"),)), usage=Usage(0, 50, 1000, 0)
        )
        after = await store.add_usage(info.id, Usage(10, 5, 0, 2000))
        assert after.usage == Usage(110, 55, 1000, 2000)
        assert after.usage.prompt_tokens == 110 + 1000 + 2000
        assert (await store.get_session(info.id)).usage == after.usage


async def test_title_end_and_reopen(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        assert info.title is None
        titled = await store.request(SetTitle(info.id, "Refactor the parser"))
        assert titled.title == "Refactor the parser"
        assert titled.updated_at >= info.updated_at

        await store.append(info.id, Message.user("hi"))
        ended = await store.end_session(info.id, "user_exit")
        assert ended.ended and ended.end_reason == "user_exit"
        assert ended.ended_at is not None and ended.ended_at >= ended.created_at

        with pytest.raises(
            SessionEnded, match=r"append \(session '.*'\) failed: the session ended"
        ):
            await store.append(info.id, Message("assistant", (TextBlock("late"),)))
        with pytest.raises(SessionEnded, match="end_session"):
            await store.end_session(info.id, "again")
        assert info.id not in [s.id for s in await store.list_sessions(include_ended=False)]

        reopened = await store.reopen_session(info.id)
        assert not reopened.ended and reopened.end_reason is None
        await store.append(info.id, Message("assistant", (TextBlock("back"),)), expected_seq=1)
        assert info.id in [s.id for s in await store.list_sessions(include_ended=False)]


async def test_expected_seq_conflicts_and_replays(store: StoreClient, peek: Peek) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        batch = [Message.user("q"), Message("assistant", (TextBlock("a"),))]
        await store.append(info.id, batch, expected_seq=0, usage=Usage(1, 1))

        # A retry of the same append (say, after a timeout) is acknowledged, not repeated.
        again = await store.append(info.id, batch, expected_seq=0, usage=Usage(1, 1))
        assert again.replayed and (again.first_seq, again.next_seq) == (0, 2)
        assert (await store.get_session(info.id)).usage == Usage(1, 1)

        with pytest.raises(SeqConflict) as conflict:
            await store.append(info.id, [Message.user("different")], expected_seq=0)
        assert conflict.value.expected == 0 and conflict.value.actual == 2
        assert "expected to append at seq 0 but the transcript ends at seq 2" in str(conflict.value)
        with pytest.raises(SeqConflict):
            await store.append(info.id, [Message.user("ahead")], expected_seq=5)

    assert peek().execute("SELECT count(*) FROM messages").get == 2


async def test_tool_results_flushed_one_by_one(store: StoreClient) -> None:
    """A results message is rewritten as each result lands; resume sees what is missing."""
    uses = [ToolUseBlock(f"toolu_{i}", "terminal", {"command": f"job {i}"}) for i in range(3)]
    results = [ToolResultBlock(u.id, f"done {i}") for i, u in enumerate(uses)]
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(
            info.id, [Message.user("run three jobs"), Message("assistant", tuple(uses))]
        )
        assert (await store.load(info.id)).open_tool_uses == ("toolu_0", "toolu_1", "toolu_2")

        # The second job finishes first.
        first = await store.append(info.id, Message("user", (results[1],)), expected_seq=2)
        assert first.first_seq == 2
        assert (await store.load(info.id)).open_tool_uses == ("toolu_0", "toolu_2")

        # Not every tool_use has its result yet: the next assistant message is refused.
        with pytest.raises(InvalidTranscript, match=r"'toolu_0', 'toolu_2' have no tool_result"):
            await store.append(info.id, Message("assistant", (TextBlock("too soon"),)))

        await store.replace_last(info.id, 2, Message("user", (results[0], results[1])))
        final = Message("user", tuple(results))  # call order, whatever the finishing order
        await store.replace_last(info.id, 2, final)
        transcript = await store.load(info.id)
        assert transcript.open_tool_uses == ()
        assert transcript.messages[2] == final

        await store.append(info.id, Message("assistant", (TextBlock("all done"),)), expected_seq=3)

        with pytest.raises(SeqConflict, match=r"can only replace the last message \(seq 3\)"):
            await store.replace_last(info.id, 2, final)
        with pytest.raises(InvalidTranscript, match="cannot change the role"):
            await store.replace_last(info.id, 3, Message.user("no"))


async def test_truncate_rolls_back_a_turn(store: StoreClient, peek: Peek) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(
            info.id, [Message.user("first"), Message("assistant", (TextBlock("ok"),))]
        )
        turn = [
            Message.user("second prompt, to be dropped"),
            Message("assistant", (ToolUseBlock("toolu_x", "terminal", {}),)),
            Message("user", (ToolResultBlock("toolu_x", "zebra output"),)),
        ]
        await store.append(info.id, turn)
        assert await store.truncate(info.id, 2) == 3
        transcript = await store.load(info.id)
        assert transcript.messages == (
            Message.user("first"),
            Message("assistant", (TextBlock("ok"),)),
        )
        assert transcript.open_tool_uses == ()
        assert await store.search("zebra") == []
        # The same tool_use id may be used again: its old row went with the turn.
        await store.append(info.id, turn[:2], expected_seq=2)
        assert (await store.load(info.id)).open_tool_uses == ("toolu_x",)
    assert peek().execute("SELECT count(*) FROM tool_calls").get == 1


@pytest.mark.parametrize(
    ("messages", "fragment"),
    [
        (
            [Message("assistant", (TextBlock("hi"),))],
            "message seq 0 (assistant): the first message must be the user's",
        ),
        (
            [Message.user("a"), Message.user("b")],
            "two user messages in a row (seq 0 and 1); roles must alternate",
        ),
        (
            [Message("user", (ThinkingBlock("t", "s"),))],
            "block 0 is a thinking block, which a user message cannot hold",
        ),
        ([Message("user", (ToolUseBlock("t", "n", {}),))], "block 0 is a tool_use block"),
        (
            [Message.user("a"), Message("assistant", (ToolResultBlock("t", "x"),))],
            "message seq 1 (assistant): block 0 is a tool_result block",
        ),
        (
            [Message("user", (ToolResultBlock("toolu_9", "x"),))],
            "tool_result for 'toolu_9' answers no tool_use of the message before it",
        ),
        (
            [
                Message.user("a"),
                Message("assistant", (ToolUseBlock("t1", "n", {}), ToolUseBlock("t1", "n", {}))),
            ],
            "tool_use id(s) 't1' repeated",
        ),
        (
            [
                Message.user("a"),
                Message("assistant", (ToolUseBlock("t1", "n", {}),)),
                Message("user", (ToolResultBlock("t1", "x"), ToolResultBlock("t1", "y"))),
            ],
            "more than one tool_result for tool_use id(s) 't1'",
        ),
        (
            [
                Message.user("a"),
                Message("assistant", (ToolUseBlock("t1", "n", {}),)),
                Message("user", (ToolResultBlock("t1", "x"),)),
                Message("assistant", (ToolUseBlock("t1", "n", {}),)),
            ],
            "tool_use id 't1' is used twice (seq 1 and 3)",
        ),
    ],
)
async def test_transcript_rules_are_enforced(
    store: StoreClient, messages: list[Message], fragment: str
) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        with pytest.raises(InvalidTranscript) as error:
            await store.append(info.id, messages)
        assert fragment in str(error.value)
        assert error.value.operation == "append" and error.value.session_id == info.id
        # Nothing of the refused batch was written, and the store still serves.
        assert (await store.load(info.id)).messages == ()


async def test_tool_use_ids_are_unique_across_appends(store: StoreClient) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.append(
            info.id,
            [
                Message.user("a"),
                Message("assistant", (ToolUseBlock("t1", "n", {}),)),
                Message("user", (ToolResultBlock("t1", "x"),)),
            ],
        )
        with pytest.raises(InvalidTranscript, match=r"tool_use id 't1' was already used at seq 1"):
            await store.append(info.id, Message("assistant", (ToolUseBlock("t1", "n", {}),)))


async def test_list_sessions_most_recent_first(store: StoreClient) -> None:
    with trio.fail_after(10):
        ids = [(await store.create_session(model="m", session_id=f"s{i}")).id for i in range(4)]
        await trio.sleep(0.01)
        await store.append("s1", Message.user("touch"))
        listed = [s.id for s in await store.list_sessions()]
        assert listed[0] == "s1"
        assert sorted(listed) == sorted(ids)
        assert len(await store.list_sessions(limit=2)) == 2
