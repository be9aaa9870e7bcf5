"""A judge's ``wait`` on a background process or a pid parks the goal until it ends (seed
#221): real sessions, real subprocesses, the fake provider scripted as worker and judge."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import trio

from hermes.fake import FakeProvider, MessagesRequest, Reply, ToolUse
from hermes.goals import GoalVerb
from hermes.session import SessionHandle

from .helpers import body_texts
from .test_goals import (
    JUDGE,
    SETTINGS,
    goal_session,  # noqa: F401 (a fixture)
    goal_status,
    judge_bodies,
    until_event,
    verdict,
    worker_prompts,
)

_LISTED = re.compile(r"^- (proc_\w+) \(pid (\d+)\): ", re.MULTILINE)


def _judge_prompt(req: MessagesRequest) -> str:
    return str(body_texts(req.body["messages"][0])[0])


def _is_waiting(payload: Any) -> bool:
    return bool(payload.verdict == "wait")


async def test_a_wait_on_a_background_process_parks_the_goal_until_it_exits(
    goal_session: SessionHandle,  # noqa: F811
    fake: FakeProvider,
    workdir: Path,
) -> None:
    build = "until [ -f go ]; do sleep 0.02; done; echo build finished"
    fake.enqueue(
        Reply.of(ToolUse("terminal", {"command": build, "background": True})),
        Reply.of("The build runs in the background; I wait for it."),
        Reply.of("The build printed 'build finished'."),
    )

    shown: list[str] = []

    def judge(req: MessagesRequest) -> Reply:
        listed = _LISTED.search(_judge_prompt(req))
        if listed is not None:  # the running build, as the judge is shown it
            shown.append(listed.group(1))
            return verdict("wait", "the build still runs", wait_on_session=listed.group(1))
        return verdict("done", "the build finished")

    fake.when(judge, model=JUDGE)
    with goal_session.subscribe() as sub:
        await goal_session.prompt("/goal build the project")
        events = await until_event(sub, "GoalUpdated", _is_waiting)
        (process_id,) = shown
        seen = body_texts(judge_bodies(fake)[0]["messages"][0])[0]
        assert "Background processes the agent has running" in seen and build in seen
        assert events[-1].payload.message == (
            f"goal waiting on background process {process_id}: the build still runs"
        )
        status = await goal_session.goal(GoalVerb("status"))
        assert f"(waiting on background process {process_id})" in status.output
        await trio.sleep(0.3)  # parked: no continuation, no judge call while it runs
        assert len(worker_prompts(fake)) == 1 and len(judge_bodies(fake)) == 1
        (workdir / "go").touch()
        events = await until_event(sub, "GoalUpdated", goal_status("done"))
    over = [e.payload.message for e in events if e.type == "GoalUpdated"]
    assert over[0].startswith(f"goal wait over: background process {process_id} (`until")
    nudge = worker_prompts(fake)[1]
    assert "The wait is over: background process" in nudge
    assert "exited with code 0" in nudge and "build finished" in nudge  # its exit, its output
    answer = await goal_session.goal(GoalVerb("status"))
    assert answer.goal is not None and answer.goal["turns_used"] == 2


async def test_a_wait_on_a_pid_ends_when_that_process_exits(
    goal_session: SessionHandle,  # noqa: F811
    fake: FakeProvider,
) -> None:
    other = await trio.lowlevel.open_process(["sleep", "60"])
    try:
        fake.enqueue(Reply.of("A deploy (another tool) runs; waiting."), Reply.of("Deployed."))
        fake.when(verdict("wait", "the deploy runs", wait_on_pid=other.pid), model=JUDGE, times=1)
        fake.when(verdict("done", "deployed"), model=JUDGE, times=1)
        with goal_session.subscribe() as sub:
            await goal_session.prompt("/goal deploy it")
            events = await until_event(sub, "GoalUpdated", _is_waiting)
            assert f"goal waiting on pid {other.pid}" in events[-1].payload.message
            await trio.sleep(0.3)
            assert len(worker_prompts(fake)) == 1
            other.kill()
            await other.wait()
            await until_event(sub, "GoalUpdated", goal_status("done"))
        assert f"The wait is over: pid {other.pid} exited" in worker_prompts(fake)[1]
    finally:
        if other.returncode is None:
            other.kill()
            await other.wait()


async def test_a_wait_on_nothing_this_session_can_watch_goes_on_at_once(
    open_session: Any, fake: FakeProvider
) -> None:
    session = await open_session(goals=SETTINGS)
    dead = await trio.lowlevel.open_process(["true"])
    await dead.wait()
    fake.enqueue(Reply.of("one"), Reply.of("two"), Reply.of("three"))
    for reply in (
        verdict("wait", "its poller", wait_on_session="proc_nothere"),
        verdict("wait", "its helper", wait_on_pid=dead.pid),
        verdict("done", "ok"),
    ):
        fake.when(reply, model=JUDGE, times=1)
    with session.subscribe() as sub:
        await session.prompt("/goal finish it")
        await until_event(sub, "GoalUpdated", goal_status("done"))
    prompts = worker_prompts(fake)
    assert "The wait is over: the wait on proc_nothere could not be kept" in prompts[1]
    assert f"The wait is over: pid {dead.pid} is not running on this host" in prompts[2]
