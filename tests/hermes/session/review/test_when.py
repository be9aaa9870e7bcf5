"""When a session reviews itself, what the review sends and what it may write."""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import pytest
import trio

from hermes.fake import (
    Endless,
    FakeProvider,
    MessagesRequest,
    Reply,
    ToolUse,
    Usage,
)
from hermes.memory import SAVED_NOTE, MemoryStore
from hermes.review import REVIEW_PROMPT, ReviewSettings
from hermes.review.actor import DIGEST_SYSTEM
from hermes.session import (
    SessionDeps,
    TurnEnd,
)
from hermes.session.messages import MachineInput
from hermes.store import StoreClient

from ..conftest import MODEL, SessionFactory
from ..control_helpers import next_event, turn_completed
from ..helpers import body_texts, strip_cache, wire_result_text, wire_results
from .conftest import (
    NOTHING,
    REVIEWER,
    GatedClient,
    add,
    file_bytes,
    is_review,
    main_requests,
    review_done,
    review_requests,
    script_review,
)

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


# -- 11. when no review runs; budgets ------------------------------------------------------


# An interrupted user turn counts, as in Hermes (seed #261; test_counter.py).
@pytest.mark.parametrize("stop", ["cancel"])
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
