"""Smart approvals: the fake provider over real HTTP, scripted as the judge; real bash."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
import trio

from hermes.fake import FakeProvider, Hang, Reply, ToolUse
from hermes.model import ModelClient, RetryPolicy
from hermes.tools import ApprovalChoice, ToolCall, ToolContext, ToolOutcome, ToolRegistry
from hermes.tools.smart import ApprovalMode, JudgeChoice, ModelJudge, read_verdict

from ..fake_model import FakeSetup
from .guarded import Person


@pytest.fixture
def fake_setup() -> FakeSetup:
    return FakeSetup(api_key="judge-key", demo=False)


@pytest.fixture
def retry() -> RetryPolicy:
    return RetryPolicy(max_attempts=1, deadline=30)


@pytest.fixture
def person() -> Person:
    return Person(ApprovalChoice.ONCE)


@pytest.fixture
def smart(ctx: ToolContext, client: ModelClient, person: Person) -> ToolContext:
    ctx.approvals.mode = ApprovalMode.SMART
    ctx.approvals.judge = ModelJudge(client=client, model="judge-model")
    ctx.approvals.judge_timeout = 2.0
    return attrs.evolve(ctx, ask_approval=person)


def verdict(decision: str, reason: str = "because") -> Reply:
    return Reply.of(ToolUse("verdict", {"decision": decision, "reason": reason}))


async def run(registry: ToolRegistry, ctx: ToolContext, command: str) -> ToolOutcome:
    with trio.fail_after(30):
        return await registry.call(ToolCall("s1", "terminal", {"command": command}), ctx)


@pytest.fixture
def build(workdir: Path) -> Path:
    (workdir / "build" / "obj").mkdir(parents=True)
    return workdir / "build"


async def test_the_judge_approves_and_the_person_is_not_asked(
    registry: ToolRegistry, smart: ToolContext, fake: FakeProvider, person: Person, build: Path
) -> None:
    fake.enqueue(verdict("approve", "a build folder inside the project"))
    outcome = await run(registry, smart, "rm -rf build")
    assert not outcome.is_error and outcome.details["approval"] == "smart_approved"
    assert not await trio.Path(build).exists() and person.asked == []
    body = fake.message_requests[0].body
    assert body["model"] == "judge-model" and body["tool_choice"] == {"type": "any"}
    assert "rm -rf build" in str(body["messages"]) and "recursive delete" in str(body["messages"])
    assert smart.approvals.approved == set()  # a smart approval covers this command only


async def test_the_judge_denies_with_its_reason(
    registry: ToolRegistry, smart: ToolContext, fake: FakeProvider, person: Person, build: Path
) -> None:
    fake.enqueue(verdict("deny", "deletes outside the task"))
    outcome = await run(registry, smart, "rm -rf build")
    assert outcome.is_error and outcome.details["verdict"] == "smart_denied"
    assert "the safety reviewer denied it" in outcome.content
    assert "deletes outside the task" in outcome.content
    assert await trio.Path(build).exists() and person.asked == []


async def test_escalate_and_a_judge_that_times_out_go_to_the_person(
    registry: ToolRegistry, smart: ToolContext, fake: FakeProvider, person: Person, build: Path
) -> None:
    fake.enqueue(verdict("escalate", "unsure"), Hang())
    first = await run(registry, smart, "git reset --hard")
    assert first.details["approval"] == "approved_once"
    assert len(person.asked) == 1
    with trio.fail_after(20):
        second = await run(registry, smart, "rm -rf build")
    assert not second.is_error and not await trio.Path(build).exists()
    assert len(person.asked) == 2 and len(fake.message_requests) == 2


async def test_three_denials_in_a_row_trip_the_breaker(
    registry: ToolRegistry, smart: ToolContext, fake: FakeProvider, person: Person, build: Path
) -> None:
    fake.enqueue(*(verdict("deny", f"no {i}") for i in range(3)))
    for i in range(3):
        outcome = await run(registry, smart, f"rm -rf build  # try {i}")
        assert outcome.details["verdict"] == "smart_denied"
    assert "3 denials in a row: stop trying variations" in outcome.content
    person.choice = ApprovalChoice.DENY
    fourth = await run(registry, smart, "rm -rf build")
    assert fourth.details["verdict"] == "denied"  # the person answered, not the judge
    assert len(fake.message_requests) == 3 and len(person.asked) == 1
    assert smart.approvals.smart_denials == 3  # a person's denial is not counted
    person.choice = ApprovalChoice.ONCE
    await run(registry, smart, "rm -rf build")
    assert (
        smart.approvals.smart_denials == 0 and not await trio.Path(build).exists()
    )  # an approval resets it


async def test_the_floor_opaque_commands_and_unattended_runs_are_never_judged(
    registry: ToolRegistry, smart: ToolContext, fake: FakeProvider, person: Person, build: Path
) -> None:
    floor = await run(registry, smart, "rm -rf /")
    assert floor.content.startswith("BLOCKED")
    opaque = await run(registry, smart, "CMD=ls; $CMD")
    assert opaque.details["approval"] == "approved_once" and len(person.asked) == 1
    alone = attrs.evolve(smart, ask_approval=None)
    unattended = await run(registry, alone, "rm -rf build")
    assert unattended.details["verdict"] == "unattended" and await trio.Path(build).exists()
    assert fake.message_requests == []


async def test_mode_off_runs_flagged_commands_but_never_a_persons_question(
    registry: ToolRegistry, ctx: ToolContext, workdir: Path, build: Path
) -> None:
    ctx.approvals.mode = ApprovalMode.OFF
    outcome = await run(registry, ctx, "rm -rf build")
    assert outcome.details["approval"] == "approvals_off" and not await trio.Path(build).exists()
    agents = await run(registry, ctx, "echo x > AGENTS.md")
    assert agents.details["verdict"] == "unattended" and not (workdir / "AGENTS.md").exists()


@pytest.mark.parametrize(
    ("tool_input", "text", "choice"),
    [
        ({"decision": "APPROVE"}, "", JudgeChoice.APPROVE),
        (None, "Deny. It wipes the disk.", JudgeChoice.DENY),
        (None, '{"decision": "escalate"}', JudgeChoice.ESCALATE),
        (None, "", JudgeChoice.ESCALATE),
        ({"decision": "maybe"}, "sure, run it", JudgeChoice.ESCALATE),
    ],
)
def test_reading_the_judges_reply(tool_input: object, text: str, choice: JudgeChoice) -> None:
    assert read_verdict(tool_input, text).choice is choice
