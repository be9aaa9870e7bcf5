"""The reviewer task on its own, and the session's ``ReviewHost`` around it.

The model is the fake provider over real HTTP; memory is a real ``MemoryStore``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from actors import Actor, ActorSystem, TaskCancelled
from hermes.fake import Endless, ErrorReply, FakeProvider, Reply, ToolUse, Usage
from hermes.memory import MemoryStore
from hermes.model import Message, ModelClient, RetryPolicy, TextBlock
from hermes.review import Reviewer, ReviewJob, ReviewOutcome, ReviewSettings
from hermes.session.events import EventHub
from hermes.session.reviews import ReviewHost

from ..fake_model import CHECKED, FakeSetup, fast_retry

MODEL = "claude-test"


@pytest.fixture
def fake_setup() -> FakeSetup:
    return CHECKED


@pytest.fixture
def retry() -> RetryPolicy:
    return fast_retry(1, deadline=10)


def job(tmp_path: Path) -> ReviewJob:
    return ReviewJob(
        session_id="s-1",
        turn=3,
        model=MODEL,
        system=(TextBlock("You are a test agent."),),
        tools=(),
        transcript=(Message.user("I use zsh"), Message("assistant", (TextBlock("Noted."),))),
        cwd=tmp_path,
        spill_dir=tmp_path / "spill",
    )


def add(content: str) -> ToolUse:
    return ToolUse("memory", {"action": "add", "content": content})


async def run_review(
    system: ActorSystem,
    client: ModelClient,
    memory: MemoryStore,
    tmp_path: Path,
    settings: ReviewSettings | None = None,
) -> ReviewOutcome:
    reviewer = Reviewer(job(tmp_path), client, memory, settings or ReviewSettings())
    task = await system.spawn_task(reviewer, name="reviewer")
    with trio.fail_after(10):
        return await task.result()


async def test_a_finished_review_commits_its_adds_in_one_step(
    system: ActorSystem,
    client: ModelClient,
    fake: FakeProvider,
    memory: MemoryStore,
    tmp_path: Path,
) -> None:
    fake.enqueue(Reply.of("Saving.", add("Shell: zsh")), Reply.of("Done."))
    outcome = await run_review(system, client, memory, tmp_path)
    assert outcome is not None
    assert (outcome.end, outcome.added, outcome.staged, outcome.iterations) == (
        "completed",
        1,
        0,
        2,
    )
    assert outcome.tokens > 0
    assert memory.entries("memory") == ["Shell: zsh"]
    first = fake.message_requests[0].body
    assert first["model"] == MODEL and first.get("tools", []) == []  # the job's tools, as given
    assert first["messages"][-1]["content"][-1]["text"].startswith("[Background memory review")


async def test_only_the_memory_tool_runs_in_a_review(
    system: ActorSystem,
    client: ModelClient,
    fake: FakeProvider,
    memory: MemoryStore,
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": f"touch {marker}"}, id="toolu_t")),
        Reply.of("Nothing to save."),
    )
    outcome = await run_review(system, client, memory, tmp_path)
    assert outcome is not None and outcome.end == "completed"
    assert not marker.exists()
    result = fake.message_requests[1].body["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_t" and result["is_error"] is True


async def test_a_failed_call_commits_nothing(
    system: ActorSystem,
    client: ModelClient,
    fake: FakeProvider,
    memory: MemoryStore,
    tmp_path: Path,
) -> None:
    fake.enqueue(Reply.of(add("drafted")), ErrorReply(400, "no"))
    outcome = await run_review(system, client, memory, tmp_path)
    assert outcome is not None and outcome.end == "failed"
    assert outcome.added == 0
    assert memory.entries("memory") == [] and not memory.path("memory").exists()


async def test_budgets_end_a_review_and_commit(
    system: ActorSystem,
    client: ModelClient,
    fake: FakeProvider,
    memory: MemoryStore,
    tmp_path: Path,
) -> None:
    usage = Usage(
        input_tokens=900, output_tokens=10, cache_creation_input_tokens=0, cache_read_input_tokens=0
    )
    fake.enqueue(Reply.of(add("one"), usage=usage), Reply.of(add("two"), usage=usage))
    settings = ReviewSettings(token_budget=1_500)
    outcome = await run_review(system, client, memory, tmp_path, settings)
    assert outcome is not None
    assert (outcome.end, outcome.added, outcome.tokens) == ("budget", 2, 1_820)
    assert memory.entries("memory") == ["one", "two"]


async def test_a_killed_review_leaves_no_writes_and_closes_its_stream(
    system: ActorSystem,
    client: ModelClient,
    fake: FakeProvider,
    memory: MemoryStore,
    tmp_path: Path,
) -> None:
    fake.enqueue(Reply.of(add("never saved")), Endless(event_delay=0.01))
    reviewer = Reviewer(job(tmp_path), client, memory, ReviewSettings())
    with trio.fail_after(10):
        task = await system.spawn_task(reviewer, name="reviewer")
        streaming = await fake.wait_for_requests(2)
        while streaming.events_sent < 3:  # noqa: ASYNC110 - no event for stream progress
            await trio.sleep(0.005)
        await task.kill()
        await streaming.wait_disconnect()
        with pytest.raises(TaskCancelled):  # no outcome
            await task.result()
    assert memory.entries("memory") == [] and not memory.path("memory").exists()


# -- the host -------------------------------------------------------------------------------


class Owner(Actor):
    """Holds a ``ReviewHost`` like a session does."""

    def __init__(self, host: ReviewHost, tmp_path: Path) -> None:
        self.host = host
        self.tmp_path = tmp_path

    async def receive(self, message: Any) -> Any:
        j = job(self.tmp_path)
        await self.host.start(
            self.ctx,
            session_id=j.session_id,
            turn=j.turn,
            model=j.model,
            system=j.system,
            tools=j.tools,
            transcript=j.transcript,
            cwd=j.cwd,
            spill_dir=j.spill_dir,
        )
        reviewer = self.ctx.child("reviewer")
        assert reviewer is not None
        if message == "cancel-after-finish":
            await reviewer.wait_exited()  # finished; its exit notice is not handled yet
        elif message == "cancel-mid-stream":
            while not any(r.events_sent >= 3 for r in self.fake.message_requests[1:]):  # noqa: ASYNC110
                await trio.sleep(0.005)
        cut = await self.host.cancel(self.ctx, "new input")
        return cut, self.host.running

    fake: FakeProvider


@pytest.mark.parametrize("when", ["cancel-after-finish", "cancel-mid-stream"])
async def test_the_host_reports_how_a_review_it_stops_really_ended(
    system: ActorSystem,
    client: ModelClient,
    fake: FakeProvider,
    memory: MemoryStore,
    tmp_path: Path,
    when: str,
) -> None:
    second = Reply.of("Done.") if when == "cancel-after-finish" else Endless(event_delay=0.01)
    fake.enqueue(Reply.of(add("Shell: zsh")), second)
    hub = EventHub("s-1")
    host = ReviewHost(ReviewSettings(interval=1), memory, client, hub)
    owner = Owner(host, tmp_path)
    owner.fake = fake
    ref = await system.spawn(owner, name="owner")
    with hub.subscribe() as sub, trio.fail_after(10):
        cut, running = await ref.call(when, timeout=10)
        events = sub.drain()
    assert not running
    (done,) = [e.payload for e in events if e.type == "ReviewCompleted"]
    if when == "cancel-after-finish":  # it committed: say so, not "cancelled"
        assert not cut
        assert (done.outcome, done.added) == ("completed", 1)
        assert memory.entries("memory") == ["Shell: zsh"]
    else:
        assert cut
        assert (done.outcome, done.added, done.detail) == ("cancelled", 0, "new input")
        assert memory.entries("memory") == []
