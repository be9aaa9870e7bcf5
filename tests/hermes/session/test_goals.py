"""Standing goals and loops through a real session, the fake provider scripted as the judge.

The worker model is ``claude-test``; the judge's calls go to ``goal-judge``
(``[goals] judge_model``), so a rule on that model answers them and the queue
answers the worker.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from hermes.fake import FakeProvider, Reply, ToolUse
from hermes.goals import GoalSettings, GoalVerb, SetGoal
from hermes.session import InvalidInput, SessionHandle, Subscriber
from hermes.store import StoreClient
from hermes.store.goal_queries import LoadGoals

from .conftest import SessionFactory
from .helpers import body_texts

JUDGE = "goal-judge"
SETTINGS = GoalSettings(judge_model=JUDGE, loop_min_interval=0.01)


def verdict(word: str, reason: str, **extra: Any) -> Reply:
    return Reply.of(ToolUse("verdict", {"verdict": word, "reason": reason, **extra}))


def judge_says(fake: FakeProvider, *replies: Reply) -> None:
    for reply in replies:
        fake.when(reply, model=JUDGE, times=1)


async def until_event(sub: Subscriber, kind: str, test: Any = lambda p: True) -> list[Any]:
    """Events up to the first ``kind`` whose payload passes ``test``."""
    seen = []
    with trio.fail_after(30):
        async for event in sub.receive:
            seen.append(event)
            if event.type == kind and test(event.payload):
                return seen
    raise AssertionError("the subscription ended")


async def prompt_until(session: SessionHandle, text: str, kind: str, test: Any) -> list[Any]:
    """Prompt ``text`` and return the events up to the first ``kind`` passing ``test``."""
    with session.subscribe() as sub:
        await session.prompt(text)
        return await until_event(sub, kind, test)


def goal_status(status: str) -> Any:
    return lambda p: p.status == status


def worker_prompts(fake: FakeProvider) -> list[str]:
    """The last user text of every worker request that ends in text (not tool results)."""
    texts = [body_texts(r.body["messages"][-1]) for r in fake.message_requests
             if r.body["model"] != JUDGE]  # fmt: skip
    return [t[-1] for t in texts if t]


def judge_bodies(fake: FakeProvider) -> list[dict[str, Any]]:
    return [r.body for r in fake.message_requests if r.body["model"] == JUDGE]


@pytest.fixture
async def goal_session(open_session: SessionFactory) -> SessionHandle:
    return await open_session(goals=SETTINGS)


async def test_a_goal_continues_with_the_judges_note_until_the_judge_says_done(
    goal_session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("I wrote the parser; tests next."), Reply.of("Tests pass: 12 passed."))
    judge_says(
        fake, verdict("continue", "the tests were not run yet"), verdict("done", "12 passed")
    )
    with goal_session.subscribe() as sub:
        accepted = await goal_session.prompt("/goal build the parser and make its tests pass")
        assert accepted.how == "goal" and accepted.turn == 1
        events = await until_event(sub, "GoalUpdated", goal_status("done"))
    updates = [e.payload for e in events if e.type == "GoalUpdated"]
    assert updates[-1].message == "goal achieved: 12 passed"
    assert updates[-1].turns_used == 2 and updates[-1].max_turns == 20
    assert any(e.type == "GoalReplied" and "goal set (20-turn budget)" in e.payload.output
               for e in events)  # fmt: skip
    prompts = worker_prompts(fake)
    assert prompts[0] == "build the parser and make its tests pass"
    assert "[Continuing toward your standing goal: turn 2 of 20]" in prompts[1]
    assert "the tests were not run yet" in prompts[1]  # the judge's note, as machine input
    judged = judge_bodies(fake)
    assert len(judged) == 2 and judged[0]["tool_choice"]["type"] == "any"
    assert [b["temperature"] for b in judged] == [0, 0]  # seed #221: the judge at 0
    assert all("temperature" not in r.body for r in fake.message_requests
               if r.body["model"] != JUDGE)  # fmt: skip
    assert "I wrote the parser; tests next." in body_texts(judged[0]["messages"][0])[0]
    status = await goal_session.goal(GoalVerb("status"))
    assert status.goal is not None and status.goal["status"] == "done"
    assert (await goal_session.state()).turn == 2  # no third turn after done


async def test_blocked_pauses_and_resume_starts_the_budget_again(
    goal_session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("I need the API key."), Reply.of("Done with the key."))
    judge_says(fake, verdict("blocked", "it needs the user's API key"), verdict("done", "ok"))
    with goal_session.subscribe() as sub:
        await goal_session.goal(SetGoal(text="deploy the service", max_turns=5))
        events = await until_event(sub, "GoalUpdated", goal_status("paused"))
        paused = events[-1].payload
        assert paused.message.startswith("goal paused: the judge ruled it blocked: it needs")
        assert "/goal resume" in paused.message and "/goal clear" in paused.message
        answer = await goal_session.goal(GoalVerb("resume"))
        assert answer.goal is not None and answer.goal["turns_used"] == 0
        assert answer.turn == 2
        await until_event(sub, "GoalUpdated", goal_status("done"))
    assert "the person resumed the goal" in worker_prompts(fake)[1]


async def test_the_turn_budget_pauses_the_goal(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    session = await open_session(goals=attrs.evolve(SETTINGS, max_turns=2))
    fake.enqueue(Reply.of("one"), Reply.of("two"), Reply.of("three"))
    fake.when(verdict("continue", "more to do"), model=JUDGE)
    events = await prompt_until(
        session, "/goal polish everything", "GoalUpdated", goal_status("paused")
    )
    assert "turn budget spent (2/2)" in events[-1].payload.message
    assert len(worker_prompts(fake)) == 2


async def test_a_failing_gate_feeds_its_output_back_and_skips_the_judge(
    goal_session: SessionHandle, fake: FakeProvider, workdir: Path
) -> None:
    fake.enqueue(
        Reply.of("Started."),
        Reply.of("Nothing done yet."),
        Reply.of(ToolUse("terminal", {"command": "touch done.txt"})),
        Reply.of("Created done.txt."),
    )
    judge_says(fake, verdict("done", "the file exists"))
    gate = "test -f done.txt || { echo no done.txt; exit 3; }"
    with goal_session.subscribe() as sub:
        await goal_session.goal(SetGoal(text="create done.txt"))
        await goal_session.goal(GoalVerb("pause"))  # the gate is in place before a turn counts
        added = await goal_session.prompt(f"/goal gate add {gate}")
        assert added.how == "goal"
        await goal_session.goal(GoalVerb("resume"))
        events = await until_event(sub, "GoalUpdated", goal_status("done"))
    failed = worker_prompts(fake)[2]
    assert "a quality gate failed" in failed and "Exit code: 3" in failed
    assert "no done.txt" in failed
    assert len(judge_bodies(fake)) == 1  # the failed gate skipped the judge
    assert (workdir / "done.txt").exists()
    messages = [e.payload.message for e in events if e.type == "GoalUpdated"]
    assert any("quality gate failed (exit 3)" in m for m in messages)


async def test_a_judge_that_gives_no_verdict_three_times_pauses_the_goal(
    goal_session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(*(Reply.of(f"step {n}") for n in range(5)))
    fake.when(Reply.of("hmm, hard to say"), model=JUDGE)
    events = await prompt_until(
        goal_session, "/goal tidy the repo", "GoalUpdated", goal_status("paused")
    )
    assert "the judge gave no verdict 3 turns in a row" in events[-1].payload.message
    assert len(judge_bodies(fake)) == 3


async def test_a_drafted_contract_reaches_the_judge(
    goal_session: SessionHandle, fake: FakeProvider
) -> None:
    contract = '{"outcome": "a green suite", "verification": "make test passes"}'
    fake.enqueue(Reply.of("make test: 40 passed"))
    judge_says(fake, Reply.of(contract), verdict("done", "the suite is green"))
    events = await prompt_until(
        goal_session, "/goal draft make the suite green", "GoalUpdated", goal_status("done")
    )
    drafted = [e.payload.message for e in events if e.type == "GoalUpdated"]
    assert any("- Verification: make test passes" in m for m in drafted)
    judge_prompt = body_texts(judge_bodies(fake)[1]["messages"][0])[0]
    assert "Completion contract" in judge_prompt and "make test passes" in judge_prompt
    assert judge_bodies(fake)[0]["temperature"] == 0  # the draft too (seed #222)


async def test_inline_contract_lines_and_subgoals_reach_the_judge(
    goal_session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("started"), Reply.of("finished, docs too"))
    judge_says(fake, verdict("continue", "docs missing"), verdict("done", "all met"))
    with goal_session.subscribe() as sub:
        await goal_session.prompt("/goal ship the CLI\nverify: hermes --help works")
        await goal_session.prompt("/subgoal the README mentions it")
        await until_event(sub, "GoalUpdated", goal_status("done"))
    assert worker_prompts(fake)[0] == "ship the CLI"
    assert "- 1. the README mentions it" in worker_prompts(fake)[1]
    judged = body_texts(judge_bodies(fake)[1]["messages"][0])[0]
    assert "- Verification: hermes --help works" in judged
    assert "the README mentions it" in judged


BAD = [
    ("/goal pause now", "/goal pause takes nothing after it"),
    ("/goal --turns lots fix it", "N must be a number from 1 to 1000, got 'lots'"),
    ("/goal gate add rm -rf /tmp/x", "there is no goal"),
    ("/goal gate remove x", "/goal gate remove N: N must be a number from 1, got 'x'"),
    ("/subgoal more tests", "/goal subgoal: there is no goal"),
    ("/goal resume", "there is no goal"),
    ("/loop --times 0 poll", "/loop --times N: N must be a number from 1 to 10000, got '0'"),
    ("/loop 5m", "/loop: the prompt is empty"),
    ("/loop pause", "/loop pause: there is no loop"),
    ("/goal --  ", "the goal text is empty"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
async def test_bad_goal_commands_get_precise_errors(
    goal_session: SessionHandle, text: str, message: str
) -> None:
    with pytest.raises(InvalidInput) as info:
        await goal_session.prompt(text)
    assert message in str(info.value)
    assert (await goal_session.state()).turn == 0  # nothing reached the model


async def test_gate_errors_name_the_index(goal_session: SessionHandle, fake: FakeProvider) -> None:
    fake.enqueue(Reply.of("ok"))
    fake.when(verdict("continue", "go on"), model=JUDGE)
    await goal_session.goal(SetGoal(text="x"))
    await goal_session.goal(GoalVerb("pause"))
    with pytest.raises(InvalidInput) as info:
        await goal_session.prompt("/goal gate remove 2")
    assert "/goal gate remove 2: there is no item 2 (none: the list is empty)" in str(info.value)


async def test_an_interrupted_turn_pauses_the_goal(
    goal_session: SessionHandle, fake: FakeProvider
) -> None:
    from hermes.fake import Stall, Text

    fake.enqueue(Reply.of(Text("working on it"), fault=Stall(after=1)))
    with goal_session.subscribe() as sub:
        await goal_session.prompt("/goal refactor the store")
        await until_event(sub, "MessageStarted")
        await goal_session.cancel()
        events = await until_event(sub, "GoalUpdated", goal_status("paused"))
    assert "turn 1 was cancelled" in events[-1].payload.message
    assert judge_bodies(fake) == []


# -- /loop -----------------------------------------------------------------------------------


def loop_status(status: str) -> Any:
    return lambda p: p.status == status


def wakeups(prompts: Iterable[str]) -> list[str]:
    return [p for p in prompts if p.startswith("[/loop wakeup #")]


async def test_a_loop_stops_at_a_line_that_is_only_loop_complete(
    goal_session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("queue has 3 jobs"), Reply.of("queue is empty.\nLOOP_COMPLETE"))
    with goal_session.subscribe() as sub:
        accepted = await goal_session.prompt("/loop 1s check the queue")
        assert accepted.turn == 1
        events = await until_event(sub, "LoopUpdated", loop_status("done"))
    assert (
        "finished after 2 wakeup(s): the agent replied LOOP_COMPLETE" in events[-1].payload.message
    )
    prompts = wakeups(worker_prompts(fake))
    assert len(prompts) == 2 and prompts[1].startswith("[/loop wakeup #2, every 1s]")
    assert "Recurring task: check the queue" in prompts[0]


async def test_a_loop_with_times_runs_that_many_wakeups(
    goal_session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(*(Reply.of(f"tick {n}") for n in range(4)))
    events = await prompt_until(
        goal_session, "/loop every 1s poll CI --times 2", "LoopUpdated", loop_status("done")
    )
    assert "it ran the 2 time(s) asked for" in events[-1].payload.message
    assert len(wakeups(worker_prompts(fake))) == 2


async def test_a_loop_until_judge_ends_it_and_blocked_pauses_it(
    goal_session: SessionHandle, fake: FakeProvider
) -> None:
    fake.enqueue(Reply.of("deploy at 40%"), Reply.of("deploy at 100%"))
    judge_says(fake, verdict("continue", "not yet"), verdict("done", "it reached 100%"))
    events = await prompt_until(
        goal_session,
        "/loop 1s watch the deploy --until the deploy is at 100%",
        "LoopUpdated",
        loop_status("done"),
    )
    assert "the stop condition is met: it reached 100%" in events[-1].payload.message
    judged = body_texts(judge_bodies(fake)[0]["messages"][0])[0]
    assert "Goal:\nthe deploy is at 100%" in judged and "deploy at 40%" in judged
    assert judge_bodies(fake)[0]["temperature"] == 0  # --until reuses the judge (seed #227)
    assert "Stop condition: the deploy is at 100%" in wakeups(worker_prompts(fake))[0]

    fake.enqueue(Reply.of("the cluster is gone"))
    judge_says(fake, verdict("blocked", "the cluster was deleted"))
    events = await prompt_until(
        goal_session, "/loop 1s watch it --until it is green", "LoopUpdated", loop_status("paused")
    )
    assert "judged unreachable: the cluster was deleted" in events[-1].payload.message
    status = await goal_session.prompt("/loop status")
    assert status.how == "goal"


async def test_the_emergency_stop_holds_wakeups_and_continuations(
    open_session: SessionFactory, fake: FakeProvider, tmp_path: Path
) -> None:
    estop = tmp_path / "ESTOP"
    estop.write_text("set\n")
    session = await open_session(goals=attrs.evolve(SETTINGS, estop_file=estop))
    fake.enqueue(Reply.of("queue empty\nLOOP_COMPLETE"))
    with session.subscribe() as sub:
        accepted = await session.prompt("/loop 1s check the queue")
        assert accepted.turn is None  # held: no turn started
        await until_event(sub, "LoopUpdated", lambda p: "emergency stop is on" in p.message)
        assert fake.message_requests == []
        estop.unlink()  # hermes resume
        await until_event(sub, "LoopUpdated", loop_status("done"))
    assert len(wakeups(worker_prompts(fake))) == 1

    estop.write_text("set\n")
    fake.enqueue(Reply.of("step one"))
    judge_says(fake, verdict("continue", "more to do"))
    events = await prompt_until(  # a person's own prompt still runs
        session, "/goal finish it", "GoalUpdated", lambda p: "held" in p.message
    )
    assert "the emergency stop is on" in events[-1].payload.message
    assert worker_prompts(fake)[-1] == "finish it"  # no continuation went out


async def test_an_unattended_session_sends_goal_words_to_the_model(
    open_session: SessionFactory, fake: FakeProvider
) -> None:
    session = await open_session(goals=SETTINGS, unattended=True)  # a subagent's
    fake.enqueue(Reply.of("noted"))
    with trio.fail_after(20):
        result = await session.run("/goal take over the daemon")
    assert result.text == "noted"
    assert worker_prompts(fake) == ["/goal take over the daemon"]
    assert judge_bodies(fake) == []


async def test_a_goal_and_a_loop_outlive_the_session_actor(
    open_session: SessionFactory, fake: FakeProvider, store: StoreClient
) -> None:
    fake.enqueue(Reply.of("tick"), Reply.of("step one"))
    judge_says(fake, verdict("wait", "the build runs", wait_seconds=3600))
    first = await open_session(goals=SETTINGS)
    with first.subscribe() as sub:
        await first.prompt("/loop 2h check the backups --times 5")
        await until_event(sub, "TurnCompleted")
        await first.prompt("/goal finish the migration\nverify: make migrate")
        await first.prompt("/subgoal keep the old API")
        await until_event(sub, "GoalUpdated", lambda p: p.verdict == "wait")  # still active
    session_id = first.id
    await first.close()
    stored = await store.request(LoadGoals(session_id))
    assert stored is not None and "finish the migration" in stored

    again = await open_session(session_id, goals=SETTINGS)
    answer = await again.goal(GoalVerb("status"))
    assert answer.goal is not None and answer.goal["status"] == "paused"
    assert answer.goal["paused_reason"] == "the session restarted"
    assert answer.goal["contract"]["verification"] == "make migrate"
    assert answer.goal["subgoals"] == ["keep the old API"]
    assert answer.loop is not None and answer.loop["status"] == "active"
    assert answer.loop["ticks"] == 1 and answer.loop["times"] == 5
    cleared = await again.goal(GoalVerb("clear"))
    assert cleared.goal is None
    await again.prompt("/loop stop")
    assert await store.request(LoadGoals(session_id)) is None
