"""The reply ladders through a session (issue 24, item 4; seeds #60, #61, #66).

A cut reply is continued, a cut tool call retried with a boosted budget, the
last attempt rolled back; a runaway stream is cut and dropped; an empty reply
is nudged, retried and sent to the fallback model. The transcript stays valid.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from actors import ActorSystem
from hermes.fake import FakeProvider, Reply, Reset, Text, Thinking, ToolUse
from hermes.model import ModelClient
from hermes.session import (
    SessionConfig,
    SessionDeps,
    SessionEvent,
    SessionHandle,
    TurnEnd,
    TurnResult,
    start_session,
)
from hermes.session.ladders import CONTINUE_NUDGE, EMPTY_NUDGE, THINKING_NUDGE
from hermes.store import StoreClient
from hermes.tools import ToolRegistry

from ..fake_model import KEY, STRICT, FakeSetup, fast_retry
from .conftest import SessionFactory
from .control_helpers import gated, next_event, request_messages, wire_texts
from .helpers import assert_valid, payloads

CUT = "max_tokens"
LOOP_LINE = "I will check the configuration file once more.\n"


@pytest.fixture
def fake_setup() -> FakeSetup:
    return STRICT


async def run(
    session: SessionHandle, text: str = "write it"
) -> tuple[TurnResult, list[SessionEvent]]:
    with session.subscribe() as sub, trio.fail_after(20):
        result = await session.run(text)
        events = sub.drain()
    return result, events


# -- cut replies -------------------------------------------------------------------------


async def test_a_reply_cut_at_the_output_limit_is_continued(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(
        Reply.of("The first half, ", stop_reason=CUT),
        Reply.of("and the second half, ", stop_reason=CUT),
        Reply.of("and the end."),
    )
    result, events = await run(session)
    assert result.reason is TurnEnd.COMPLETED
    assert result.text == "The first half, and the second half, and the end."
    assert [p.action for p in payloads(events, "ReplyRecovering")] == ["continue"] * 2
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.text() for m in transcript.messages] == [
        "write it",
        "The first half, ",
        CONTINUE_NUDGE,
        "and the second half, ",
        CONTINUE_NUDGE,
        "and the end.",
    ]
    # The continuation request carries the cut text and the nudge, as the model sees them.
    second = request_messages(fake.message_requests[1])
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert wire_texts(second[2]) == [CONTINUE_NUDGE]


async def test_a_reply_still_cut_after_four_continuations_is_rolled_back(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(*[Reply.of(f"piece {n} ", stop_reason=CUT) for n in range(5)])
    result, events = await run(session)
    assert result.reason is TurnEnd.FAILED
    assert "still cut after 4 continuations" in result.detail
    assert len(fake.message_requests) == 5
    assert [p.reason for p in payloads(events, "ErrorOccurred")] == ["cut_reply"]
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.text() for m in transcript.messages] == ["write it"]  # the ladder's rows are gone


async def test_a_cut_tool_call_is_retried_with_a_boosted_output_budget(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    cut_call = Reply.of(
        "Writing.", ToolUse("terminal", fragments=('{"command": "echo cu',)), stop_reason=CUT
    )
    fake.enqueue(
        cut_call,
        cut_call,
        Reply.of(ToolUse("terminal", {"command": "echo whole"})),
        Reply.of("done"),
    )
    result, events = await run(session)
    assert result.reason is TurnEnd.COMPLETED and result.text == "done"
    budgets = [r.body["max_tokens"] for r in fake.message_requests]
    assert budgets == [4096, 8192, 16384, 4096]  # doubled per retry; the next step starts over
    assert [p.action for p in payloads(events, "ReplyRecovering")] == ["retry", "retry"]
    transcript = await store.load(session.id)
    assert_valid(transcript)
    uses = [u.input for m in transcript.messages for u in m.tool_uses()]
    assert uses == [{"command": "echo whole"}]  # the cut calls never ran nor stayed


async def test_a_tool_call_cut_five_times_fails_the_turn_cleanly(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    session = await open_session(context_window=1_000_000)
    cut = Reply.of(ToolUse("terminal", fragments=('{"comm',)), stop_reason=CUT)
    fake.enqueue(*[cut] * 5)
    result, _ = await run(session)
    assert result.reason is TurnEnd.FAILED
    assert "cut at the output limit, 5 times" in result.detail
    budgets = [r.body["max_tokens"] for r in fake.message_requests]
    assert budgets == [4096, 8192, 16384, 32768, 64000]  # at most 64,000
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.role for m in transcript.messages] == ["user"]


# -- runaway repetition ------------------------------------------------------------------


async def test_a_runaway_stream_is_cut_and_dropped(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    deltas = (LOOP_LINE,) * 2000  # ~94,000 characters if it were streamed to the end
    fake.enqueue(Reply.of(Text(deltas=deltas)))
    result, events = await run(session)
    assert result.reason is TurnEnd.FAILED
    assert "repetition" in result.detail
    streamed = sum(len(p.text) for p in payloads(events, "TextDelta"))
    assert 16_000 <= streamed < 30_000  # cut soon after the detector's threshold
    assert [p.reason for p in payloads(events, "ErrorOccurred")] == ["repetition"]
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert all(LOOP_LINE not in m.text() for m in transcript.messages)


async def test_looping_tool_arguments_are_asked_again(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    loop = ToolUse("write_file", {"path": "out.txt", "content": LOOP_LINE * 800})
    fake.enqueue(
        Reply.of(loop),
        Reply.of(ToolUse("write_file", {"path": "out.txt", "content": "short\n"})),
        Reply.of("written"),
    )
    result, events = await run(session)
    assert result.reason is TurnEnd.COMPLETED
    assert (workdir / "out.txt").read_text() == "short\n"
    assert [p.action for p in payloads(events, "ReplyRecovering")] == ["retry"]
    assert_valid(await store.load(session.id))


# -- empty replies -----------------------------------------------------------------------


async def test_an_empty_reply_after_tools_is_nudged_once(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": "echo hi"})), Reply.of(), Reply.of("the answer")
    )
    result, events = await run(session)
    assert result.text == "the answer"
    assert [p.action for p in payloads(events, "ReplyRecovering")] == ["nudge"]
    nudged = request_messages(fake.message_requests[2])[-1]
    assert EMPTY_NUDGE in wire_texts(nudged)  # with the tool result, in the same user message
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.role for m in transcript.messages] == ["user", "assistant"] * 2


async def test_a_thinking_only_reply_is_fed_back(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Reply.of(Thinking("let me see")), Reply.of("forty-two"))
    result, events = await run(session)
    assert result.text == "forty-two"
    assert [p.action for p in payloads(events, "ReplyRecovering")] == ["feed"]
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.text() for m in transcript.messages] == ["write it", "", THINKING_NUDGE, "forty-two"]


async def test_text_streamed_before_a_dropped_connection_is_the_answer(
    session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    # Events 1-3: message_start, ping, the text block's start; 4-5 the two deltas.
    dropped = Reply.of(Text(deltas=("The answer ", "is 42.")), fault=Reset(after=5))
    fake.enqueue(dropped, Reply.of())  # the retry comes back empty
    result, events = await run(session, "what is it?")
    assert result.reason is TurnEnd.COMPLETED and result.text == "The answer is 42."
    assert [p.action for p in payloads(events, "ReplyRecovering")] == ["salvage"]
    assert len(payloads(events, "RequestRetried")) == 1
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.text() for m in transcript.messages] == ["what is it?", "The answer is 42."]


@pytest.fixture
async def fallback_session(
    system: ActorSystem,
    fake: FakeProvider,
    store: StoreClient,
    registry: ToolRegistry,
    config: SessionConfig,
) -> AsyncIterator[SessionHandle]:
    async with ModelClient(
        api_key=KEY,
        base_url=fake.base_url,
        retry=fast_retry(2),
        trust_env=False,
        fallback_models=("claude-fallback",),
    ) as client:
        deps = SessionDeps(store=store, client=client, registry=registry)
        yield await start_session(system, config, deps)


async def test_empty_replies_are_retried_then_go_to_the_fallback_model(
    fallback_session: SessionHandle, fake: FakeProvider, store: StoreClient
) -> None:
    fake.when(Reply.of(), model="claude-test", times=2)
    fake.when(Reply.of("from the fallback"), model="claude-fallback", times=1)
    result, events = await run(fallback_session, "hello")
    assert result.text == "from the fallback"
    # One retry; the second empty looked deterministic (the same output again): fallback.
    assert [r.body["model"] for r in fake.message_requests] == [
        "claude-test",
        "claude-test",
        "claude-fallback",
    ]
    whys = [p.why for p in payloads(events, "ReplyRecovering")]
    assert whys == ["the reply was empty", "the reply was empty: asking claude-fallback"]
    transcript = await store.load(fallback_session.id)
    assert_valid(transcript)
    assert [m.text() for m in transcript.messages] == ["hello", "from the fallback"]


async def test_a_rolled_back_ladder_keeps_what_came_before_it(
    session: SessionHandle, fake: FakeProvider, store: StoreClient, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": gated("go", "echo done")})),
        *[Reply.of(f"piece {n} ", stop_reason=CUT) for n in range(5)],
    )
    with session.subscribe() as sub, trio.fail_after(20):
        await session.prompt("start")
        await next_event(sub, "ToolStarted")
        await session.steer("and mind the tests")
        (workdir / "go").touch()
        done = await next_event(sub, "TurnCompleted")
    assert done.payload.reason == TurnEnd.FAILED.value
    transcript = await store.load(session.id)
    assert_valid(transcript)
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user"]
    assert "and mind the tests" in transcript.messages[2].text()  # the steer stayed
    assert "piece" not in "".join(m.text() for m in transcript.messages)
