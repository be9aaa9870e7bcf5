"""Skill reviews (issue 28, item 5; seeds #262, #265): after N tool-calling iterations the
background reviewer considers skills, writes them only if it completes, and is killed by
new input like a memory review (real session, fake provider over HTTP, real folders)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from hermes.fake import FakeProvider, MessagesRequest, Reply, ToolUse
from hermes.memory import MemoryStore, MemoryTool
from hermes.review import ReviewSettings
from hermes.skills import SkillLibrary, SkillManageTool, SkillViewTool
from hermes.skills.pending import pending
from hermes.tools import ToolRegistry, default_registry

from ..conftest import SessionFactory
from ..control_helpers import next_event
from ..helpers import body_texts, strip_cache
from .conftest import SLOW, review_done

SKILL_MARK = "[Background skill review"
SKILL = (
    "---\nname: flaky-build\ndescription: Fix the flaky build by clearing the cache\n---\n"
    "1. Clear .cache.\n2. Rebuild twice.\n"
)


def is_skill_review(req: MessagesRequest) -> bool:
    return any(SKILL_MARK in text for m in req.messages for text in body_texts(m))


def create(content: str = SKILL, name: str = "flaky-build") -> ToolUse:
    return ToolUse("skill_manage", {"action": "create", "name": name, "content": content})


@pytest.fixture
def library(tmp_path: Path) -> SkillLibrary:
    return SkillLibrary(tmp_path / "skills", bundled_dir=None)


@pytest.fixture
def registry(library: SkillLibrary) -> ToolRegistry:
    registry = default_registry()
    registry.register(MemoryTool())
    registry.register(SkillViewTool(library))
    registry.register(SkillManageTool(library))
    return registry


def long_task(fake: FakeProvider, steps: int, answer: str = "Fixed.") -> None:
    """A turn of ``steps`` tool-calling iterations (reading a file), then ``answer``."""
    for i in range(steps):
        fake.enqueue(Reply.of(f"step {i}", ToolUse("read_file", {"path": f"notes{i}.txt"})))
    fake.enqueue(Reply.of(answer))


@pytest.fixture
def skill_reviews(open_reviewing: SessionFactory, workdir: Path) -> SessionFactory:
    """Sessions whose memory reviews never come due and skill reviews come after 3 steps."""
    for i in range(3):
        (workdir / f"notes{i}.txt").write_text(f"note {i}: the cache is stale\n")

    async def start(**overrides: object) -> object:
        settings = ReviewSettings(interval=1000, skill_interval=3)
        return await open_reviewing(review=settings, cwd=workdir, **overrides)

    return start  # type: ignore[return-value]


async def test_a_long_task_brings_a_skill_review_that_writes_a_skill(
    skill_reviews: SessionFactory, fake: FakeProvider, library: SkillLibrary
) -> None:
    fake.when(Reply.of("Worth a skill.", create()), predicate=is_skill_review, times=1)
    fake.when(Reply.of("Saved the skill."), predicate=is_skill_review, times=1)
    session = await skill_reviews()
    with trio.fail_after(30), session.subscribe() as sub:
        fake.enqueue(Reply.of("Hi."))  # a short turn: no review
        await session.run("hello")
        long_task(fake, 3)
        await session.run("fix the flaky build")
        started = await next_event(sub, "ReviewStarted")
        done = await review_done(sub)
    assert started.payload.turn == 2 and done.turn == 2
    assert (done.outcome, done.added, done.staged) == ("completed", 1, 0)
    assert "Skill written: create flaky-build" in done.detail
    assert (library.user_dir / "flaky-build" / "SKILL.md").read_text() == SKILL
    usage = json.loads((library.user_dir / ".usage.json").read_text())
    assert usage["flaky-build"]["created_by"] == "agent"
    reviews = [r for r in fake.message_requests if is_skill_review_record(r)]
    main = [r for r in fake.message_requests if not is_skill_review_record(r)]
    assert len(reviews) == 2
    assert len(main) == 5  # hello, 3 steps and the answer: no review after the short turn
    # the review replays the session (same system prompt and tools: the cached prefix)
    first = reviews[0].body
    assert first["system"] == main[-1].body["system"]
    assert [t["name"] for t in first["tools"]] == [t["name"] for t in main[-1].body["tools"]]
    replayed = strip_cache(first["messages"][: len(main[-1].body["messages"])])
    assert replayed == strip_cache(main[-1].body["messages"])


async def test_new_input_kills_a_skill_review_and_nothing_is_written(
    skill_reviews: SessionFactory, fake: FakeProvider, library: SkillLibrary
) -> None:
    fake.when(Reply.of(create()), predicate=is_skill_review, times=1)
    fake.when(SLOW, predicate=is_skill_review, times=1)
    session = await skill_reviews()
    with trio.fail_after(30), session.subscribe() as sub:
        long_task(fake, 3)
        await session.run("fix the flaky build")
        await next_event(sub, "ReviewStarted")
        while True:  # the second review call streams: the draft holds the create
            reviews = [r for r in fake.message_requests if is_skill_review_record(r)]
            if len(reviews) >= 2 and reviews[1].events_sent >= 3:
                break
            await trio.sleep(0.005)
        streaming = reviews[1]
        fake.enqueue(Reply.of("Next."))
        await session.prompt("next question")
        done = await review_done(sub)
        await streaming.wait_disconnect()
    assert done.outcome == "cancelled" and (done.added, done.staged) == (0, 0)
    assert not (library.user_dir / "flaky-build").exists()


def is_skill_review_record(record: object) -> bool:
    body = record.body  # type: ignore[attr-defined]
    return any(SKILL_MARK in text for m in body["messages"] for text in body_texts(m))


async def test_skill_manage_in_the_task_starts_the_count_again(
    skill_reviews: SessionFactory, fake: FakeProvider, library: SkillLibrary
) -> None:
    session = await skill_reviews()
    with trio.fail_after(30), session.subscribe() as sub:
        fake.enqueue(
            Reply.of("step", ToolUse("read_file", {"path": "notes0.txt"})),
            Reply.of("step", ToolUse("read_file", {"path": "notes1.txt"})),
            Reply.of("saving", create()),
            Reply.of("Saved it myself."),
        )
        await session.run("fix it and keep the recipe")
        fake.enqueue(Reply.of("Hi."))
        await session.run("thanks")
        state = await session.state()
        events = sub.drain()
    assert not state.reviewing
    assert not [e for e in events if e.type.startswith("Review")]  # 3 steps, but one wrote
    assert (library.user_dir / "flaky-build" / "SKILL.md").is_file()


async def test_with_write_approval_the_reviews_skill_is_staged_for_the_person(
    skill_reviews: SessionFactory, fake: FakeProvider, library: SkillLibrary
) -> None:
    library.write_approval = True
    fake.when(Reply.of(create()), predicate=is_skill_review, times=1)
    fake.when(Reply.of("Proposed a skill."), predicate=is_skill_review, times=1)
    session = await skill_reviews()
    with trio.fail_after(30), session.subscribe() as sub:
        long_task(fake, 3)
        await session.run("fix the flaky build")
        done = await review_done(sub)
    assert (done.outcome, done.added, done.staged) == ("completed", 0, 1)
    assert not (library.user_dir / "flaky-build").exists()
    (record,) = pending(library.user_dir)
    assert (record["name"], record["new"], record["content"]) == ("flaky-build", True, SKILL)
    assert record["origin"].startswith("review of session ")


COMBINED_MARK = "[Background memory and skill review"


def is_combined_review(req: MessagesRequest) -> bool:
    return any(COMBINED_MARK in text for m in req.messages for text in body_texts(m))


async def test_refine_reviews_at_once_with_the_focus_even_when_reviews_are_off(
    open_reviewing: SessionFactory, fake: FakeProvider, library: SkillLibrary
) -> None:
    library.user_dir.mkdir(parents=True)
    SkillManageTool(library).writer.create("flaky-build", SKILL)
    patch = ToolUse(
        "skill_manage",
        {
            "action": "patch",
            "name": "flaky-build",
            "old_text": "2. Rebuild twice.",
            "new_text": "2. Rebuild twice.\n3. Check the cache is gone.",
        },
    )
    view = ToolUse("skill_view", {"name": "flaky-build"})
    fake.when(Reply.of(view), predicate=is_combined_review, times=1)
    fake.when(Reply.of(patch), predicate=is_combined_review, times=1)
    fake.when(Reply.of("Refined."), predicate=is_combined_review, times=1)
    session = await open_reviewing(review=ReviewSettings(enabled=False))
    with trio.fail_after(30), session.subscribe() as sub:
        fake.enqueue(Reply.of("Hi."))
        await session.run("hello")
        accepted = await session.prompt("/refine the flaky-build skill")
        done = await review_done(sub)
    assert accepted.how == "reviewing"
    assert (done.outcome, done.added) == ("completed", 1)
    assert (
        "3. Check the cache is gone." in (library.user_dir / "flaky-build" / "SKILL.md").read_text()
    )
    ask = [t for m in fake.message_requests[1].body["messages"] for t in body_texts(m)][-1]
    assert ask.startswith(COMBINED_MARK)
    assert ask.endswith("give priority to: the flaky-build skill")
    assert len(fake.message_requests) == 4  # hello, then the review's three calls: no turn
    usage = json.loads((library.user_dir / ".usage.json").read_text())
    assert "last_used" not in usage["flaky-build"]  # a review's read is not a use


async def test_memory_and_skills_due_together_make_one_combined_review(
    open_reviewing: SessionFactory,
    fake: FakeProvider,
    library: SkillLibrary,
    memory: MemoryStore,
    workdir: Path,
) -> None:
    for i in range(3):
        (workdir / f"notes{i}.txt").write_text(f"note {i}\n")
    remember = ToolUse("memory", {"action": "add", "target": "user", "content": "Uses make."})
    fake.when(Reply.of(remember, create()), predicate=is_combined_review, times=1)
    fake.when(Reply.of("Saved both."), predicate=is_combined_review, times=1)
    settings = ReviewSettings(interval=1, skill_interval=3)
    session = await open_reviewing(review=settings, cwd=workdir)
    with trio.fail_after(30), session.subscribe() as sub:
        long_task(fake, 3)
        await session.run("fix the flaky build")
        done = await review_done(sub)
    assert (done.outcome, done.added) == ("completed", 2)
    assert memory.entries("user") == ["Uses make."]
    assert (library.user_dir / "flaky-build" / "SKILL.md").read_text() == SKILL
    tools = [t["name"] for t in fake.message_requests[-1].body["tools"]]
    assert {"memory", "skill_manage", "skill_view"} <= set(tools)  # the session's own list
