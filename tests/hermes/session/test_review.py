"""Background memory review through a real session, the memory tool live in a session.

The fake provider answers the main turns from its queue and the review's
requests through rules keyed on the review prompt (``is_review``).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from hermes.fake import (
    Endless,
    FakeProvider,
    MessagesRequest,
    Reply,
    RequestRecord,
    ToolUse,
    Usage,
)
from hermes.fake.script import Scripted
from hermes.memory import SAVED_NOTE, MemoryDraft, MemoryStore, MemoryTool
from hermes.model import EventSink, ModelClient, ModelRequest, ModelResponse, RetryPolicy
from hermes.review import REVIEW_PROMPT, ReviewSettings
from hermes.review.actor import DIGEST_SYSTEM
from hermes.session import (
    NoTurnRunning,
    SessionClosed,
    SessionDeps,
    SessionHandle,
    Subscriber,
    TurnEnd,
)
from hermes.session.events import SessionEvent
from hermes.session.messages import MachineInput
from hermes.store import StoreClient
from hermes.tools import ToolRegistry, default_registry

from .conftest import KEY, MODEL, SessionFactory
from .control_helpers import next_event, strict_fake, turn_completed
from .helpers import body_texts, strip_cache, wire_result_text, wire_results

REVIEW_MARK = "[Background memory review"
REVIEWER = "claude-review"


def is_review(req: MessagesRequest) -> bool:
    return any(REVIEW_MARK in text for m in req.messages for text in body_texts(m))


def record_is_review(record: RequestRecord) -> bool:
    return any(REVIEW_MARK in text for m in record.body["messages"] for text in body_texts(m))


def review_requests(fake: FakeProvider) -> list[RequestRecord]:
    return [r for r in fake.message_requests if record_is_review(r)]


def main_requests(fake: FakeProvider) -> list[RequestRecord]:
    return [r for r in fake.message_requests if not record_is_review(r)]


def add(content: str, target: str = "memory") -> ToolUse:
    return ToolUse("memory", {"action": "add", "target": target, "content": content})


def script_review(fake: FakeProvider, *steps: Scripted) -> None:
    """The review's replies, one per review request, in order."""
    for step in steps:
        fake.when(step, predicate=is_review, times=1)


NOTHING = Reply.of("Nothing to save.")
SLOW = Endless(delta="thinking about it ", event_delay=0.01)


@pytest.fixture
async def fake() -> AsyncIterator[FakeProvider]:
    async with strict_fake() as provider:
        yield provider


class GatedClient(ModelClient):
    """A real client that can hold the requests ``held_if`` picks until ``gate`` is set."""

    held_if: Callable[[ModelRequest], bool] | None = None
    gate: trio.Event | None = None

    async def complete(
        self, request: ModelRequest, on_event: EventSink | None = None
    ) -> ModelResponse:
        if self.held_if is not None and self.gate is not None and self.held_if(request):
            await self.gate.wait()
        return await super().complete(request, on_event)


@pytest.fixture
async def client(fake: FakeProvider) -> AsyncIterator[GatedClient]:
    retry = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01, deadline=30)
    gated = GatedClient(api_key=KEY, base_url=fake.base_url, retry=retry, trust_env=False)
    async with gated:
        yield gated


@pytest.fixture
def memory(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memories")


@pytest.fixture
def registry() -> ToolRegistry:
    registry = default_registry()
    registry.register(MemoryTool())
    return registry


@pytest.fixture
def deps(deps: SessionDeps, memory: MemoryStore) -> SessionDeps:
    return attrs.evolve(deps, memory=memory)


@pytest.fixture
def open_reviewing(open_session: SessionFactory) -> SessionFactory:
    """A session reviewing after every turn (unless ``review=`` says otherwise)."""

    async def start(session_id: str | None = None, **overrides: Any) -> SessionHandle:
        settings = {"review": ReviewSettings(interval=1), "load_context_files": False}
        return await open_session(session_id=session_id, **{**settings, **overrides})

    return start


async def review_done(sub: Subscriber, turn: int | None = None) -> Any:
    where: Callable[[Any], bool] | None = None if turn is None else (lambda p: p.turn == turn)
    return (await next_event(sub, "ReviewCompleted", where)).payload


def file_bytes(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


# -- 9. a review after the Nth turn --------------------------------------------------------


async def test_a_review_replays_the_session_and_adds_to_memory(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    script_review(
        fake,
        Reply.of("Saving that.", add("Prefers tabs over spaces.", target="user")),
        Reply.of("Saved."),
    )
    session = await open_reviewing(review=ReviewSettings(interval=2))
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("Noted."), Reply.of("Tabs it is."))
        await session.run("hello")
        state_after_one = await session.state()
        await session.run("I prefer tabs over spaces")
        started = await next_event(sub, "ReviewStarted")
        done = await review_done(sub)
        state = await session.state()

    assert not state_after_one.reviewing  # interval 2: no review after the first turn
    assert started.payload.turn == 2
    assert (done.turn, done.outcome, done.added, done.staged) == (2, "completed", 1, 0)
    assert "Prefers tabs over spaces." in done.detail
    assert not state.reviewing
    assert memory.entries("user") == ["Prefers tabs over spaces."]
    # The review replays the transcript under the session's system prompt and tools
    # (the cached prefix), then asks the review question.
    first, second = review_requests(fake)
    last_main = main_requests(fake)[-1]
    assert first.body["model"] == MODEL
    assert strip_cache(first.body["system"]) == strip_cache(last_main.body["system"])
    assert strip_cache(first.body["tools"]) == strip_cache(last_main.body["tools"])
    replayed = strip_cache(first.body["messages"])
    assert replayed[: len(last_main.body["messages"])] == strip_cache(last_main.body["messages"])
    assert body_texts(replayed[-2]) == ["Tabs it is."]
    assert replayed[-1] == {"role": "user", "content": [{"type": "text", "text": REVIEW_PROMPT}]}
    # The tool result the review saw says the add is drafted, not live.
    (result,) = wire_results(second.body["messages"][-1])
    assert "saved when the review completes" in wire_result_text(result)


async def test_a_review_stages_replace_and_remove_as_proposals(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    memory.add("memory", "Editor: vim")
    memory.add("memory", "Shell: bash")
    before = file_bytes(memory.path("memory"))
    script_review(
        fake,
        Reply.of(
            ToolUse(
                "memory",
                {"action": "replace", "old_text": "vim", "content": "Editor: helix"},
            ),
            ToolUse("memory", {"action": "remove", "old_text": "bash"}),
        ),
        Reply.of("Proposed two changes."),
    )
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("Helix, and no more bash."))
        await session.run("I switched to helix and fish")
        done = await review_done(sub)

    assert (done.outcome, done.added, done.staged) == ("completed", 0, 2)
    assert file_bytes(memory.path("memory")) == before
    assert memory.entries("memory") == ["Editor: vim", "Shell: bash"]
    proposals = memory.proposals()
    assert sorted((p.op, p.entry, p.text) for p in proposals) == [
        ("remove", "Shell: bash", None),
        ("replace", "Editor: vim", "Editor: helix"),
    ]
    assert {p.origin for p in proposals} == {session.id}
    results = wire_results(review_requests(fake)[1].body["messages"][-1])
    assert all("Staged as proposal" in wire_result_text(r) for r in results)


# -- 10. a review is cancelled by any new input ------------------------------------------------


async def _review_streaming(
    session: SessionHandle, fake: FakeProvider, sub: Subscriber
) -> RequestRecord:
    """Run a turn whose review drafts an add, then streams forever; its streaming request."""
    script_review(fake, Reply.of(add("Drafted, never saved.")), SLOW)
    fake.when(NOTHING, predicate=is_review)  # any later review
    fake.enqueue(Reply.of("Done."))
    count = len(fake.requests)
    await session.run("do the thing")
    await next_event(sub, "ReviewStarted")
    record = await fake.wait_for_requests(count + 3)  # the turn, the review's add, its stream
    assert record_is_review(record) and record.body["messages"][-1]["role"] == "user"
    while record.events_sent < 3:  # noqa: ASYNC110 - no event for stream progress
        await trio.sleep(0.005)  # streaming: the draft holds an add
    return record


async def test_a_new_prompt_cancels_a_review_mid_stream_without_writes(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        streaming = await _review_streaming(session, fake, sub)
        fake.enqueue(Reply.of("Next answer."))
        asked = time.monotonic()
        accepted = await session.prompt("next question")
        done = await review_done(sub)
        gone = time.monotonic()
        disconnected = await streaming.wait_disconnect()
        seen: list[SessionEvent] = []
        await next_event(sub, "TurnCompleted", lambda p: p.turn == 2, seen=seen)
        turn = seen[-1].payload
        second = (await next_event(sub, "ReviewCompleted", seen=seen)).payload  # turn 2's own
        state = await session.state()

    assert accepted.how == "started" and accepted.turn == 2
    assert done.outcome == "cancelled" and (done.added, done.staged) == (0, 0)
    assert "new turn" in done.detail or "prompt" in done.detail
    assert gone - asked < 1.0
    assert disconnected - asked < 1.0
    assert turn.reason == TurnEnd.COMPLETED.value and turn.text == "Next answer."
    assert not memory.path("memory").exists() and memory.entries("memory") == []
    assert (second.turn, second.outcome, second.added) == (2, "completed", 0)
    # At most one in flight: turn 1's review ended before turn 2 started, and turn 2's
    # review started after that turn ended.
    order = [(e.type, e.payload.turn) for e in seen if e.type.startswith(("Review", "Turn"))]
    assert order == [
        ("TurnStarted", 2),
        ("TurnCompleted", 2),
        ("ReviewStarted", 2),
        ("ReviewCompleted", 2),
    ]
    assert not state.reviewing
    assert len(review_requests(fake)) == 3


async def _verb(session: SessionHandle, verb: str, fake: FakeProvider) -> None:
    if verb == "prompt":
        fake.enqueue(Reply.of("ok"))
        await session.prompt("again")
    elif verb == "steer":
        fake.enqueue(Reply.of("ok"))
        await session.steer("a steer when idle starts a turn")
    elif verb == "interrupt":
        with pytest.raises(NoTurnRunning):
            await session.interrupt()
    elif verb == "cancel":
        cancelled = await session.cancel()
        assert cancelled.result is None
    elif verb == "compress":
        await session.compress()
    elif verb == "close":
        await session.close()
    elif verb == "machine":
        fake.enqueue(Reply.of("ok"))
        await session.target.cast(MachineInput("process", "a process finished"))  # type: ignore[attr-defined]
    else:
        raise AssertionError(verb)


@pytest.mark.parametrize(
    "verb", ["prompt", "steer", "interrupt", "cancel", "compress", "close", "machine"]
)
async def test_every_verb_and_input_cancels_a_running_review(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore, verb: str
) -> None:
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        streaming = await _review_streaming(session, fake, sub)
        await _verb(session, verb, fake)
        done = await review_done(sub)
        await streaming.wait_disconnect()
        if verb in ("prompt", "steer", "machine"):
            assert (await turn_completed(sub, 2)).reason == TurnEnd.COMPLETED.value
        if verb in ("prompt", "steer"):  # a person's turn: reviewed in its turn
            assert (await review_done(sub, 2)).outcome == "completed"

    assert done.outcome == "cancelled" and done.turn == 1
    assert memory.entries("memory") == []
    if verb == "close":
        with pytest.raises(SessionClosed):
            await session.state()
    else:
        assert not (await session.state()).reviewing
    # Machine input and the control verbs start no review of their own.
    assert len(review_requests(fake)) == (3 if verb in ("prompt", "steer") else 2)


# -- 11. when no review runs; budgets ------------------------------------------------------


@pytest.mark.parametrize("stop", ["interrupt", "cancel"])
async def test_no_review_after_a_turn_that_did_not_complete(
    open_reviewing: SessionFactory, fake: FakeProvider, stop: str
) -> None:
    fake.when(NOTHING, predicate=is_review)
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Endless(event_delay=0.01))
        await session.prompt("talk forever")
        await next_event(sub, "TextDelta")
        if stop == "interrupt":
            await session.interrupt()
        else:
            await session.cancel()
        first = await turn_completed(sub, 1)
        state = await session.state()  # the session handled the turn's end before this
        # The next completed turn is reviewed: the stopped one did not count, or break it.
        fake.enqueue(Reply.of("Fine."))
        await session.run("a short one")
        done = await review_done(sub)

    assert first.reason == stop + "ed" if stop == "interrupt" else first.reason == "cancelled"
    assert not state.reviewing
    assert done.turn == 2 and done.outcome == "completed"
    assert len(review_requests(fake)) == 1


async def test_no_review_after_machine_input_turns(
    open_reviewing: SessionFactory, fake: FakeProvider
) -> None:
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("Seen it."))
        await session.target.cast(MachineInput("process", "process 7 exited"))  # type: ignore[attr-defined]
        done = await turn_completed(sub, 1)
        state = await session.state()

    assert done.reason == TurnEnd.COMPLETED.value
    assert not state.reviewing
    assert review_requests(fake) == []


@pytest.mark.parametrize("why", ["unattended", "no-memory", "disabled"])
async def test_no_review_without_a_person_a_memory_store_or_the_setting(
    open_session: SessionFactory,
    system: Any,
    config: Any,
    deps: SessionDeps,
    fake: FakeProvider,
    why: str,
) -> None:
    from hermes.session import start_session

    review = ReviewSettings(interval=1, enabled=why != "disabled")
    session_config = attrs.evolve(
        config, review=review, unattended=why == "unattended", load_context_files=False
    )
    session_deps = attrs.evolve(deps, memory=None) if why == "no-memory" else deps
    session = await start_session(system, session_config, session_deps)
    with trio.fail_after(10), session.subscribe() as sub:
        for n in range(3):
            fake.enqueue(Reply.of(f"answer {n}"))
            assert (await session.run(f"question {n}")).reason is TurnEnd.COMPLETED
        state = await session.state()
        seen = sub.drain()

    assert not state.reviewing
    assert [e for e in seen if e.type.startswith("Review")] == []
    assert review_requests(fake) == []


async def test_the_iteration_budget_ends_a_review_and_keeps_its_adds(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    numbers = itertools.count(1)

    def keep_adding(req: MessagesRequest) -> Reply | None:
        return Reply.of(add(f"fact number {next(numbers)}")) if is_review(req) else None

    fake.when(keep_adding)
    session = await open_reviewing(review=ReviewSettings(interval=1, max_iterations=3))
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("ok"))
        await session.run("remember things")
        done = await review_done(sub)

    assert (done.outcome, done.added, done.staged) == ("max_iterations", 3, 0)
    assert memory.entries("memory") == ["fact number 1", "fact number 2", "fact number 3"]
    assert len(review_requests(fake)) == 3


async def test_the_token_budget_ends_a_review_and_keeps_its_adds(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore, store: StoreClient
) -> None:
    usage = Usage(
        input_tokens=5_000,
        output_tokens=20,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
    )
    script_review(fake, Reply.of(add("an expensive fact"), usage=usage))
    session = await open_reviewing(review=ReviewSettings(interval=1, token_budget=4_000))
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("ok"))
        await session.run("remember this")
        done = await review_done(sub)

    assert (done.outcome, done.added) == ("budget", 1)
    assert memory.entries("memory") == ["an expensive fact"]
    assert len(review_requests(fake)) == 1
    # The review's tokens are charged to the session, in the store and in its state.
    assert (await store.get_session(session.id)).usage.input_tokens >= 5_000
    assert (await session.state()).usage.input_tokens >= 5_000


async def test_a_failed_review_call_commits_nothing(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    from hermes.fake import ErrorReply

    script_review(
        fake,
        Reply.of(add("drafted before the failure")),
        ErrorReply(400, "bad request from the review"),
    )
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("ok"))
        await session.run("remember this")
        done = await review_done(sub)
        state = await session.state()

    assert done.outcome == "failed" and "bad request" in done.detail
    assert memory.entries("memory") == []
    assert not state.reviewing


# -- 12. another model reads a digest --------------------------------------------------------


async def test_another_review_model_gets_a_digest(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    fake.when(Reply.of(add("Works on the billing service.")), model=REVIEWER, times=1)
    fake.when(Reply.of("Saved."), model=REVIEWER, times=1)
    session = await open_reviewing(review=ReviewSettings(interval=1, model=REVIEWER))
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("Looking at the billing service now."))
        await session.run("I work on the billing service")
        done = await review_done(sub)

    assert (done.outcome, done.added) == ("completed", 1)
    assert memory.entries("memory") == ["Works on the billing service."]
    first = next(r for r in fake.message_requests if r.body["model"] == REVIEWER)
    (message,) = first.body["messages"]
    assert message["role"] == "user"
    (text,) = body_texts(message)
    assert text.startswith("[A digest of the latest part of a conversation]")
    assert "user: I work on the billing service" in text
    assert "assistant: Looking at the billing service now." in text
    assert text.endswith(REVIEW_PROMPT)
    assert [b["text"] for b in first.body["system"]] == [DIGEST_SYSTEM]
    assert [t["name"] for t in first.body["tools"]] == ["memory"]


# -- the memory tool in a live session -------------------------------------------------------


async def test_the_memory_tool_writes_at_once_but_the_prompt_keeps_its_snapshot(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    memory.add("user", "Name: Ada")
    session = await open_reviewing(review=ReviewSettings(enabled=False))
    with trio.fail_after(10):
        fake.enqueue(
            Reply.of("Saving.", add("Prefers short answers.", target="user")), Reply.of("Saved.")
        )
        result = await session.run("keep answers short from now on")
        fake.enqueue(Reply.of("Short."))
        await session.run("and now?")

    assert result.reason is TurnEnd.COMPLETED
    assert memory.entries("user") == ["Name: Ada", "Prefers short answers."]
    first, second, third = main_requests(fake)
    (tool_result,) = wire_results(second.body["messages"][-1])
    assert SAVED_NOTE in wire_result_text(tool_result)
    systems = [strip_cache(r.body["system"]) for r in (first, second, third)]
    assert systems[0] == systems[1] == systems[2]  # frozen for the session's life
    text = "\n".join(b["text"] for b in systems[0])
    assert "Name: Ada" in text and "Prefers short answers." not in text


async def test_a_due_review_skipped_for_queued_input_runs_after_the_next_turn(
    open_reviewing: SessionFactory, fake: FakeProvider, client: GatedClient
) -> None:
    fake.when(NOTHING, predicate=is_review)
    session = await open_reviewing(review=ReviewSettings(interval=2), busy_mode="queue")
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("one"))
        await session.run("first")
        fake.enqueue(Reply.of("two"), Reply.of("three"))
        gate = client.gate = trio.Event()
        client.held_if = lambda request: request.messages[-1].text() == "second"
        await session.prompt("second")
        queued = await session.prompt("third")  # waiting when turn 2 (a due review) ends
        gate.set()
        await turn_completed(sub, 3)
        done = await review_done(sub)

    assert queued.how == "queued"
    assert done.turn == 3 and done.outcome == "completed"
    (review,) = review_requests(fake)
    assert "three" in str(review.body["messages"])


# -- the idle delay ------------------------------------------------------------------------


async def test_a_due_review_waits_for_the_session_to_stay_idle(
    open_reviewing: SessionFactory, fake: FakeProvider, memory: MemoryStore
) -> None:
    script_review(fake, Reply.of(add("typed quickly")), NOTHING)
    session = await open_reviewing(review=ReviewSettings(interval=1, idle_delay=0.3))
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("one"), Reply.of("two"))
        await session.run("first")
        # The next prompt comes within the delay: no review was started for turn 1.
        await trio.sleep(0.1)
        assert review_requests(fake) == [] and not (await session.state()).reviewing
        started = trio.current_time()
        await session.run("second")
        done = await review_done(sub)
        waited = trio.current_time() - started

    assert done.turn == 2 and (done.outcome, done.added) == ("completed", 1)
    assert waited >= 0.3  # the review of turn 2 began only after 0.3 s of quiet
    assert len(review_requests(fake)) == 2  # the add, then "Nothing to save."
    assert memory.entries("memory") == ["typed quickly"]


async def test_a_review_cancelled_inside_its_memory_tool_call_writes_nothing(
    open_reviewing: SessionFactory,
    fake: FakeProvider,
    memory: MemoryStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fault injection: the draft's add (run in a worker thread by the tool) waits for us,
    # so the new prompt arrives while the review is inside the tool call.
    inside, release = threading.Event(), threading.Event()
    original = MemoryDraft.add

    def held_add(self: MemoryDraft, kind: Any, text: str) -> Any:
        inside.set()
        release.wait(5)
        return original(self, kind, text)

    monkeypatch.setattr(MemoryDraft, "add", held_add)
    script_review(fake, Reply.of(add("written half-way")), NOTHING)
    session = await open_reviewing()
    with trio.fail_after(10), session.subscribe() as sub:
        fake.enqueue(Reply.of("one"), Reply.of("two"))
        await session.run("first")
        await trio.to_thread.run_sync(inside.wait, 5)
        async with trio.open_nursery() as nursery:

            async def let_go() -> None:
                await trio.sleep(0.05)  # the kill is waiting on the tool call by now
                release.set()

            nursery.start_soon(let_go)
            result = await session.run("second")
        done = await review_done(sub)

    assert result.reason is TurnEnd.COMPLETED and result.text == "two"
    assert done.outcome == "cancelled" and (done.added, done.staged) == (0, 0)
    assert memory.entries("memory") == [] and memory.proposals() == []
    assert not memory.path("memory").exists()  # not even an empty file was written
